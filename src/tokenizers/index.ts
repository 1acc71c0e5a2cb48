/**
 * Tokenizers: the interface and per-message accounting, the chars/4 estimator, exact js-tiktoken
 * counts, and the choice by model name. Applied at the edges (client, activities, `compact()`,
 * ChatMemory); the compaction engine imports none of it.
 *
 * This index loads `tiktoken.ts`, which uses Node's `require`; code that must stay free of it
 * imports `./tokenizer.js` or `./estimator.js` directly instead.
 */
export {
  countMessageTokens,
  countMessagesTokens,
  messageCounts,
  type GivenCounts,
  MESSAGE_OVERHEAD,
  NAME_OVERHEAD,
  TOOL_CALL_OVERHEAD,
  type Tokenizer,
} from './tokenizer.js';
export { CharacterEstimatorTokenizer, CHARS_PER_TOKEN } from './estimator.js';
export { TiktokenTokenizer, TIKTOKEN_ENCODINGS, type TiktokenEncodingName } from './tiktoken.js';
export { encodingForModel, tokenizerForModel } from './for-model.js';
