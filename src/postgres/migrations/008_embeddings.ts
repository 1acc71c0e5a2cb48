/**
 * 008_embeddings: vectors of messages and memories, one per embedding model, for recall by meaning.
 * - `message_embeddings` rows go with their message (and so with their thread) by foreign key; the
 *   primary key makes "a message is embedded once per model" a rule of the schema.
 * - `memory_embeddings` rows go with their memory.
 * - Where pgvector is installed (the `pgvector/pgvector` image of docker-compose.yml), the column is
 *   pgvector's `vector`, searched with its `<=>` distance; PostgresThreadStore adds an HNSW index per
 *   dimension when it first stores vectors of that dimension (an index needs a fixed one, and the
 *   model is known only then). Elsewhere (the embedded PostgreSQL, most installations) it is `real[]`:
 *   vectors are stored normalised, and exact cosine similarity (their dot product) is summed over the
 *   rows of the scope searched (a thread, or one user's threads), which the primary key and
 *   `threads_user_idx` find without a scan.
 * Which of the two is decided here, once; the stores read the column's type (src/postgres/vectors.ts).
 */
import type { Migration } from './migration.js';

export const migration008: Migration = {
  version: 8,
  name: 'embeddings',
  sql: /* sql */ `
CREATE TABLE message_embeddings (
  thread_id  text COLLATE "C" NOT NULL,
  seq        bigint NOT NULL,
  model      text NOT NULL,
  dims       integer NOT NULL,
  embedding  real[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (thread_id, model, seq),
  FOREIGN KEY (thread_id, seq) REFERENCES messages (thread_id, seq) ON DELETE CASCADE
);

CREATE TABLE memory_embeddings (
  memory_id  text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  model      text NOT NULL,
  dims       integer NOT NULL,
  embedding  real[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (memory_id, model)
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pgvector is available but this role may not create it: vectors are stored as real[]';
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
    ALTER TABLE message_embeddings ALTER COLUMN embedding TYPE vector USING embedding::vector;
    ALTER TABLE memory_embeddings ALTER COLUMN embedding TYPE vector USING embedding::vector;
  END IF;
END $$;
`,
};
