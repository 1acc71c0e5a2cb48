/**
 * Exact token counts for OpenAI encodings, from js-tiktoken's rank tables.
 *
 * The tables are a few megabytes of JavaScript, so each is loaded on first use and once per process
 * (a module-level cache), synchronously, through `require` of js-tiktoken's CommonJS build: `count()`
 * stays synchronous and a process that only uses one encoding never parses the other.
 */
import { createRequire } from 'node:module';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import { countBpeTokens, loadBpeTable, type BpeTable } from './bpe.js';
import type { Tokenizer } from './tokenizer.js';

/** The OpenAI encodings this library counts exactly. */
export type TiktokenEncodingName = 'o200k_base' | 'cl100k_base';

/** Supported encodings, for validation and iteration. */
export const TIKTOKEN_ENCODINGS: readonly TiktokenEncodingName[] = ['o200k_base', 'cl100k_base'];

const require = createRequire(import.meta.url);
const tables = new Map<TiktokenEncodingName, BpeTable>();

/** The rank table of an encoding, loaded on first use and then shared by every tokenizer. */
function tableFor(encoding: TiktokenEncodingName): BpeTable {
  let table = tables.get(encoding);
  if (table === undefined) {
    // Literal specifiers, so that bundlers and readers see exactly which files may be loaded.
    const bpe = (
      encoding === 'o200k_base'
        ? require('js-tiktoken/ranks/o200k_base')
        : require('js-tiktoken/ranks/cl100k_base')
    ) as TiktokenBPE;
    table = loadBpeTable(bpe);
    tables.set(encoding, table);
  }
  return table;
}

/**
 * Counts tokens exactly as tiktoken encodes text with no special tokens allowed: a special-token
 * string such as `<|endoftext|>` in user text is ordinary text (several tokens), never an error.
 *
 * Construction is cheap; the encoding is loaded by the first `count()` (about 0.3 s for o200k_base)
 * or by {@link TiktokenTokenizer.preload}.
 *
 * @example
 * const tokenizer = new TiktokenTokenizer('o200k_base');
 * tokenizer.count('hello world'); // 2
 */
export class TiktokenTokenizer implements Tokenizer {
  /** The encoding name, e.g. `o200k_base`. */
  readonly name: TiktokenEncodingName;

  /**
   * @param encoding `o200k_base` (GPT-4o and later) or `cl100k_base` (GPT-4, GPT-3.5, embeddings).
   * @throws RangeError for any other encoding.
   */
  constructor(encoding: TiktokenEncodingName) {
    if (!TIKTOKEN_ENCODINGS.includes(encoding)) {
      throw new RangeError(`Unsupported encoding ${JSON.stringify(encoding)}; use o200k_base or cl100k_base`);
    }
    this.name = encoding;
  }

  /** Loads the encoding now (e.g. at worker start) so that the first count is not the slow one. */
  preload(): this {
    tableFor(this.name);
    return this;
  }

  /** Number of tokens of `text`; 0 for the empty string. */
  count(text: string): number {
    if (text === '') return 0;
    return countBpeTokens(tableFor(this.name), text);
  }
}
