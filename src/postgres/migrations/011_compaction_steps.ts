/**
 * 011_compaction_steps: a compaction is stored as one type (`Compaction`): the free-form `details`
 * column now holds its engine fields (steps, warnings, upToSeq, tokens before and after, llm). Rows
 * recorded before kept `{ outcome: { report, llm, … }, warnings, upToSeq }`; their counts move to the
 * new fields. Their steps were never stored: they read as none.
 */
import type { Migration } from './migration.js';

export const migration011: Migration = {
  version: 11,
  name: 'compaction_steps',
  sql: /* sql */ `
UPDATE compactions SET details = jsonb_strip_nulls(jsonb_build_object(
  'steps', '[]'::jsonb,
  'warnings', COALESCE(details->'warnings', '[]'::jsonb),
  'upToSeq', COALESCE(details->'upToSeq', details#>'{outcome,report,upToSeq}', '0'::jsonb),
  'includedTokensBefore', COALESCE(details#>'{outcome,report,includedTokensBefore}', '0'::jsonb),
  'includedTokensAfter', COALESCE(details#>'{outcome,report,includedTokensAfter}', '0'::jsonb),
  'llm', details#>'{outcome,llm}'
))
WHERE details IS NULL OR NOT details ? 'steps';
ALTER TABLE compactions ALTER COLUMN details SET NOT NULL;
`,
};
