/**
 * What the sidebar says after a forget (issue 48): the memory's files that still hold the text
 * (the forget is not clean), and the user's own files that still show it, as the CLI names
 * them: a notebook's saved `%recall` output and its `.ipynb_checkpoints` copy, which only the
 * user can edit. The server's answer lists both; nothing is said when neither holds it.
 */
import { IForgotten } from './request';
import { visible } from './visible';

export function forgetNotice(done: IForgotten): string {
  const said: string[] = [];
  if (!done.clean) {
    said.push(`Its text is still in ${done.remaining.map(visible).join(', ')}`);
  }
  if (done.user_files.length > 0) {
    const files = done.user_files.map(visible).join(', ');
    said.push(`Forgotten; your own files still show its text (edit them): ${files}`);
  }
  return said.join('. ');
}
