/**
 * The sidebar's `visible`: the engine's `shown` in TypeScript (tests/test_format_characters_shown.py
 * holds the Python side to the same escapes).
 */
import { visible } from '../src/visible';

describe('visible', () => {
  it('writes bidi, zero-width, tag and control characters as the engine does', () => {
    expect(visible('a\u202eb\u2066c\u2069\u200e\u200f\u061c\u200b\u2060\ufeff\xad')).toBe(
      'a\\u202eb\\u2066c\\u2069\\u200e\\u200f\\u061c\\u200b\\u2060\\ufeff\\xad'
    );
    expect(visible('\u{E0041}\u{E007F}')).toBe('\\U000e0041\\U000e007f');
    expect(visible('\x1b[2J\x9b\x7f')).toBe('\\x1b[2J\\x9b\\x7f');
  });

  it('leaves text, tabs, newlines and emoji as they are', () => {
    expect(visible('Zürich → 東京\tok\n👍')).toBe('Zürich → 東京\tok\n👍');
  });

  it('keeps a joiner only inside an emoji sequence, as the engine does', () => {
    // the same text and answer as tests/test_format_characters_shown.py's EMOJI
    expect(
      visible('dev 👩\u200d💻 flag 🏳\ufe0f\u200d🌈 hand 👍🏽\u200d x\u200dy \u200d👩 👩\u200d')
    ).toBe('dev 👩\u200d💻 flag 🏳\ufe0f\u200d🌈 hand 👍🏽\\u200d x\\u200dy \\u200d👩 👩\\u200d');
  });
});
