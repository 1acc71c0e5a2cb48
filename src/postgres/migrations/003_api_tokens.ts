/**
 * 003_api_tokens: bearer tokens of the HTTP API. Only a SHA-256 hash of each token is stored (hex),
 * so a leaked table grants nothing; the token itself is shown once, when it is created. A token is
 * never deleted, only revoked, so the table also tells whether tokens were ever configured (the API
 * serves unauthenticated requests only on loopback and only while it is empty).
 */
import type { Migration } from './migration.js';

export const migration003: Migration = {
  version: 3,
  name: 'api_tokens',
  sql: /* sql */ `
CREATE TABLE api_tokens (
  token_hash   text COLLATE "C" PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  tenant       text NOT NULL CHECK (tenant ~ '^[a-z0-9-]{1,40}$'),
  label        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_tokens_tenant_idx ON api_tokens (tenant, created_at);
`,
};
