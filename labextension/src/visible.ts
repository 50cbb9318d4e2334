/**
 * Stored text as the sidebar shows it: what a browser would obey is written as a visible escape.
 *
 * The same rule as the engine's `shown` (hipo_jupyter/memory/requests.py), so a note reads the
 * same in the terminal, the notebook and here: control characters (C0 but tab and newline, DEL,
 * C1) as `\x1b`, and the invisible format characters (Unicode category Cf: bidi marks,
 * embeddings, overrides and isolates, zero-width and tag characters) as `\u202e`,
 * `\U000e0041`. A bidi override would show a proposed rule reversed, so the user would accept
 * what they never read; a tag character spells text no one sees but a model reads.
 */

const SHOWN_ESCAPED = /[\x00-\x08\x0b-\x1f\x7f-\x9f\p{Cf}]/gu;

function escape(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  if (code > 0xffff) {
    return `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control and invisible format character as a visible escape. */
export function visible(text: string): string {
  return text.replace(SHOWN_ESCAPED, escape);
}
