/**
 * Output of the command line. Results go to stdout (with `--json`: exactly one JSON document and
 * nothing else); progress, hints and errors go to stderr, so `--json` output can be piped as is.
 * Writes wait for stdout to accept the data, so a large export piped into another program is
 * complete before the process exits.
 */
import type { Message, Part } from '../model/message.js';

/** Writes to stdout and resolves once the data is handed to the OS. */
export function write(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (err) => (err ? reject(err) : resolve()));
  });
}

/** Writes lines to stdout. */
export function printLines(lines: readonly string[]): Promise<void> {
  return lines.length === 0 ? Promise.resolve() : write(`${lines.join('\n')}\n`);
}

/** Writes one JSON document to stdout (pretty, so a person can read it too). */
export function printJson(value: unknown): Promise<void> {
  return write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A line on stderr (progress, hints, errors). */
export function note(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Columns to lay tables out in: the terminal's, else COLUMNS, else 80. */
export function terminalWidth(): number {
  const env = Number(process.env['COLUMNS']);
  return process.stdout.columns || (Number.isInteger(env) && env > 20 ? env : 80);
}

/** `1234567` → `1,234,567`. */
export function int(n: number): string {
  return n.toLocaleString('en-US');
}

/** One line: whitespace runs (newlines included) become single spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/** At most `width` characters (code points), with `…` where it was cut. */
export function clip(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  return width <= 1 ? '…'.slice(0, width) : `${chars.slice(0, width - 1).join('')}…`;
}

/**
 * At most `width` characters, cut between words (`… tokensExceed(1200); …`, never `summa…`), so a
 * clipped reason still reads right; a text without a space in its second half is cut as {@link clip}.
 */
export function clipWords(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  const head = chars.slice(0, width - 1).join('');
  const space = head.lastIndexOf(' ');
  return space >= width / 2 ? `${head.slice(0, space).trimEnd()} …` : clip(text, width);
}

/** `text` padded with spaces (or clipped) to exactly `width` characters. */
export function cell(text: string, width: number): string {
  const clipped = clip(text, width);
  return clipped + ' '.repeat(Math.max(0, width - Array.from(clipped).length));
}

/** `text` right-aligned in `width` characters. */
export function right(text: string, width: number): string {
  return text.length >= width ? text : ' '.repeat(width - text.length) + text;
}

/** A part as one short line: text as is, tool calls as `name(args)`, results as `→ result`. */
function partText(part: Part): string {
  switch (part.type) {
    case 'text':
      return oneLine(part.text);
    case 'reasoning':
      return `(reasoning) ${oneLine(part.text)}`;
    case 'tool_call':
      return `${part.name}(${oneLine(part.arguments)})`;
    case 'tool_result':
      return `${part.isError ? '→ error: ' : '→ '}${oneLine(part.result)}`;
  }
}

/** A whole message as one line (parts joined by ` · `); `(empty)` when it has no content. */
export function messageText(message: Message): string {
  const text = message.parts.map(partText).filter(Boolean).join(' · ');
  return text || '(empty)';
}

/** Left-aligned columns; the last column is not padded. */
export function table(rows: readonly string[][], header?: readonly string[]): string[] {
  const all = header ? [header, ...rows] : rows;
  const widths: number[] = [];
  for (const row of all) row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, Array.from(c).length)));
  return all.map((row) =>
    row
      .map((c, i) => (i === row.length - 1 ? c : cell(c, widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}
