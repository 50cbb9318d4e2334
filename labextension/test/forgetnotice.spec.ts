/**
 * The sidebar's notice after a forget names the user's files that still show the text, as
 * `hipo forget` does (issue 48), and the memory's own files when the forget is not clean.
 */
import { forgetNotice } from '../src/forgetnotice';

const DONE = { forgot: 'x', tombstone: '<!-- hipo forgotten id=x -->', clean: true, remaining: [] };

describe('forgetNotice', () => {
  it('says nothing when no file holds the text', () => {
    expect(forgetNotice({ ...DONE, user_files: [] })).toBe('');
  });

  it('names the notebook and its checkpoint copy that still show it', () => {
    const notice = forgetNotice({
      ...DONE,
      user_files: ['analysis.ipynb', '.ipynb_checkpoints/analysis-checkpoint.ipynb']
    });
    expect(notice).toContain('your own files still show its text');
    expect(notice).toContain('analysis.ipynb, .ipynb_checkpoints/analysis-checkpoint.ipynb');
  });

  it('says where the memory still holds it when the forget is not clean', () => {
    const notice = forgetNotice({ ...DONE, clean: false, remaining: ['memory/x.md'], user_files: [] });
    expect(notice).toBe('Its text is still in memory/x.md');
  });
});
