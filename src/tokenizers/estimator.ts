/**
 * The fallback tokenizer for models whose encoding we do not know: about four characters per
 * token, the usual rule of thumb for English text. Pure and instant; an estimate, not a count.
 */
import type { Tokenizer } from './tokenizer.js';

/** Characters per token assumed by {@link CharacterEstimatorTokenizer}. */
export const CHARS_PER_TOKEN = 4;

/**
 * Estimates tokens as `ceil(length / 4)`, where length counts UTF-16 code units (`string.length`):
 * no scan of the text, so a megabyte costs nothing. It under-counts text that tokenises densely
 * (CJK, emoji, code), so leave headroom in budgets when a model has no exact tokenizer.
 */
export class CharacterEstimatorTokenizer implements Tokenizer {
  /** Always `chars/4`. */
  readonly name = 'chars/4';

  /** `ceil(text.length / 4)`; 0 for the empty string. */
  count(text: string): number {
    return Math.ceil(text.length / CHARS_PER_TOKEN);
  }
}
