/**
 * 006_token_revocations: a counter of token revocations, so that every API process refuses a revoked
 * token on its very next request. API processes cache verified tokens (an append must not cost a
 * token query); each request reads this one-row counter instead (TokenStore.verify) and trusts a
 * cached token only if the counter has not moved since it was verified. A trigger bumps it, so a
 * revocation made any way counts: `token revoke`, another process, an operator's UPDATE or DELETE.
 */
import type { Migration } from './migration.js';

export const migration006: Migration = {
  version: 6,
  name: 'token_revocations',
  sql: /* sql */ `
CREATE TABLE api_token_revocations (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  version   bigint NOT NULL
);
INSERT INTO api_token_revocations (version) VALUES (0);

CREATE FUNCTION api_token_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE api_token_revocations SET version = version + 1;
  RETURN NULL;
END
$$;
CREATE TRIGGER api_tokens_revoked
  AFTER UPDATE OF revoked_at ON api_tokens FOR EACH ROW
  WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
  EXECUTE FUNCTION api_token_revoked();
CREATE TRIGGER api_tokens_deleted
  AFTER DELETE ON api_tokens FOR EACH ROW
  EXECUTE FUNCTION api_token_revoked();
`,
};
