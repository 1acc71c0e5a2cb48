/**
 * Chooses the tokenizer for a model name: exact js-tiktoken counts for OpenAI models whose
 * encoding is known, the chars/4 estimate for everything else.
 */
import { CharacterEstimatorTokenizer } from './estimator.js';
import { TiktokenTokenizer, type TiktokenEncodingName } from './tiktoken.js';
import type { Tokenizer } from './tokenizer.js';

/**
 * Model names and their encodings, first match wins. `gpt-4` alone (and `gpt-4-turbo`, `gpt-4-32k`,
 * `gpt-4-0613`) is cl100k_base, but `gpt-4o`, `gpt-4.1` and `gpt-4.5` are o200k_base: hence `(-|$)`.
 */
const RULES: readonly (readonly [RegExp, TiktokenEncodingName])[] = [
  [/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-4o)/, 'o200k_base'],
  [/^o[134](-|$)/, 'o200k_base'], // reasoning models: o1, o3-mini, o4-mini-2025-04-16...
  [/^gpt-4(-|$)/, 'cl100k_base'],
  [/^(gpt-3\.5|gpt-35|text-embedding-)/, 'cl100k_base'], // gpt-35: Azure's spelling
];

/**
 * Strips a provider prefix (`openai/gpt-4o`, `azure/openai/gpt-4o` → `gpt-4o`) and lower-cases, so
 * that names from routers such as OpenRouter or LiteLLM resolve like OpenAI's own.
 */
function bareModelName(model: string): string {
  const slash = model.lastIndexOf('/');
  return (slash >= 0 ? model.slice(slash + 1) : model).trim().toLowerCase();
}

/**
 * The OpenAI encoding of a model, or `undefined` when unknown.
 * @param model A model name such as `gpt-4o-mini`, `o3`, `openai/gpt-4.1`.
 */
export function encodingForModel(model: string | undefined): TiktokenEncodingName | undefined {
  if (model === undefined) return undefined;
  const name = bareModelName(model);
  for (const [pattern, encoding] of RULES) if (pattern.test(name)) return encoding;
  return undefined;
}

/**
 * A tokenizer for a model: exact (js-tiktoken) when its encoding is known, otherwise the chars/4
 * estimate. Tokenizers are cheap; encodings are loaded once per process and shared.
 * @param model A model name; `undefined` gives the estimator.
 * @example
 * tokenizerForModel('gpt-4o-mini').name; // 'o200k_base'
 * tokenizerForModel('llama-3-70b').name; // 'chars/4'
 */
export function tokenizerForModel(model?: string): Tokenizer {
  const encoding = encodingForModel(model);
  return encoding === undefined ? new CharacterEstimatorTokenizer() : new TiktokenTokenizer(encoding);
}
