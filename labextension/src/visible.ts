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

const ZERO_WIDTH_JOINER = '\u200d';
const SYMBOL = /^\p{So}$/u;
const EMOJI_BEFORE_JOINER = /^[\p{So}\ufe0f\u{1f3fb}-\u{1f3ff}]$/u;

/** The code point of `text` that ends just before `at` (a surrogate pair read whole). */
function before(text: string, at: number): string {
  const low = text.charCodeAt(at - 1);
  const start = low >= 0xdc00 && low <= 0xdfff && at >= 2 ? at - 2 : at - 1;
  return String.fromCodePoint(text.codePointAt(start) ?? 0);
}

/**
 * A zero-width joiner inside an emoji sequence (a symbol, or its variation selector or skin
 * tone, before it and a symbol after: `👩‍💻`) only draws the two as one picture: kept.
 */
function joinsEmoji(text: string, at: number): boolean {
  if (at === 0 || at + 1 >= text.length) {
    return false;
  }
  const after = String.fromCodePoint(text.codePointAt(at + 1) ?? 0);
  return EMOJI_BEFORE_JOINER.test(before(text, at)) && SYMBOL.test(after);
}

/** `text` with every control and invisible format character as a visible escape. */
export function visible(text: string): string {
  return text.replace(SHOWN_ESCAPED, (char: string, at: number) =>
    char === ZERO_WIDTH_JOINER && joinsEmoji(text, at) ? char : escape(char)
  );
}
