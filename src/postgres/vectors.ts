/**
 * How vectors are stored and compared in this database: pgvector's `vector` where migration 008 found
 * the extension, `real[]` elsewhere. The stores keep vectors normalised to length 1, so over `real[]`
 * exact cosine similarity is the dot product, summed in SQL over the scope's rows. The message and memory stores
 * build their statements from here, so both paths stay in one place.
 */
import type pg from 'pg';
import { normalize } from '../model/vectors.js';
import { withTransaction } from './transaction.js';

/** The two ways a database holds vectors. */
export type VectorKind = 'pgvector' | 'array';

/** Largest dimension pgvector's HNSW index takes for `vector`; above it, searches are exact scans. */
const HNSW_MAX_DIMENSIONS = 2000;

/** SQL for one kind of vector column. */
export interface VectorSql {
  kind: VectorKind;
  /** pgvector 0.8+: an HNSW scan under a filter goes on until it has found enough rows. */
  iterative?: boolean;
  /** Turns a text parameter holding `[x,y,…]` (JSON) into the column's type. */
  fromJson(param: string): string;
  /** Cosine similarity (-1 to 1) of `column` and the text parameter `param`, both of `dims` dimensions. */
  similarity(column: string, param: string, dims: number): string;
  /** An ORDER BY that ranks best first (pgvector's distance ascending, so its index can serve it). */
  order(column: string, param: string, dims: number): string;
}

const ARRAY: VectorSql = {
  kind: 'array',
  fromJson: (p) => `translate(${p}, '[]', '{}')::real[]`,
  similarity: (c, p) => dot(c, p),
  order: (c, p) => `${dot(c, p)} DESC`,
};

/** Dot product of a `real[]` column and a JSON text parameter, in double precision. */
function dot(column: string, param: string): string {
  return `(SELECT sum(x::float8 * y) FROM unnest(${column}, translate(${param}, '[]', '{}')::real[]) AS t(x, y))`;
}

// The dimension is a whole number the store checked: a literal, so the expression matches the index's.
const PGVECTOR: VectorSql = {
  kind: 'pgvector',
  fromJson: (p) => `${p}::vector`,
  similarity: (c, p, d) => `1 - (${c}::vector(${int(d)}) <=> ${p}::vector(${int(d)}))`,
  order: (c, p, d) => `${c}::vector(${int(d)}) <=> ${p}::vector(${int(d)})`,
};

/**
 * Reads which kind a table's `embedding` column is (decided by migration 008).
 * @param table `message_embeddings` or `memory_embeddings`.
 */
export async function vectorSql(pool: pg.Pool, table: string): Promise<VectorSql> {
  const { rows } = await pool.query<{ type: string; version: string | null }>(
    `SELECT format_type(atttypid, atttypmod) AS type,
            (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS version
     FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'embedding'`,
    [table],
  );
  if (rows[0]?.type !== 'vector') return ARRAY;
  const [major = 0, minor = 0] = (rows[0].version ?? '').split('.').map(Number);
  return { ...PGVECTOR, iterative: major > 0 || minor >= 8 };
}

/**
 * One table's vectors on one pool, as a store uses them: the column's kind (read once, and again after
 * a failed read: the database may have been unreachable) and the dimensions whose HNSW index exists.
 */
export class VectorTable {
  private kind?: Promise<VectorSql>;
  private readonly indexed = new Set<number>();

  /** @param table `message_embeddings` or `memory_embeddings`. */
  constructor(
    private readonly pool: pg.Pool,
    private readonly table: string,
  ) {}

  /** The SQL for the table's column. */
  sql(): Promise<VectorSql> {
    this.kind ??= vectorSql(this.pool, this.table).catch((err: unknown) => {
      this.kind = undefined;
      throw err;
    });
    return this.kind;
  }

  /** The SQL, once vectors of `dims` dimensions have their index: call it before storing them. */
  async sqlToStore(dims: number): Promise<VectorSql> {
    const sql = await this.sql();
    if (!this.indexed.has(dims)) {
      await ensureHnswIndex(this.pool, sql, this.table, dims);
      this.indexed.add(dims);
    }
    return sql;
  }
}

/** A vector as the stores send it to PostgreSQL: normalised to length 1, as JSON text. */
export function vectorParam(vector: readonly number[]): string {
  return JSON.stringify(normalize(vector));
}

/**
 * Runs a ranked vector search. With pgvector, an HNSW index returns its nearest candidates first and
 * the scope's filter applies after: a scope holding few of the table's rows would get too few hits.
 * pgvector 0.8's iterative scan goes on until the LIMIT is met, in nearly sorted order, so the
 * caller's statement sorts its rows again. Exact (`real[]`) searches run as they are.
 */
export async function vectorSearch<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  sql: VectorSql,
  text: string,
  params: unknown[],
): Promise<R[]> {
  if (!sql.iterative) return (await pool.query<R>(text, params)).rows;
  return withTransaction(pool, async (db) => {
    await db.query(`SET LOCAL hnsw.iterative_scan = relaxed_order`);
    return (await db.query<R>(text, params)).rows;
  });
}

/**
 * With pgvector, an HNSW index over the vectors of one dimension (partial on `dims`, on the column
 * cast to that dimension), created the first time vectors of that dimension are stored. Harmless to
 * repeat; a concurrent creator's index counts as created.
 */
export async function ensureHnswIndex(
  pool: pg.Pool,
  sql: VectorSql,
  table: string,
  dims: number,
): Promise<void> {
  if (sql.kind !== 'pgvector' || dims > HNSW_MAX_DIMENSIONS) return;
  const d = int(dims);
  try {
    await pool.query(
      `CREATE INDEX IF NOT EXISTS ${table}_hnsw_${d} ON ${table}
       USING hnsw ((embedding::vector(${d})) vector_cosine_ops) WHERE dims = ${d}`,
    );
  } catch (err) {
    // Two creators at once: one wins, the other sees the name taken (unique_violation, duplicate_table).
    const code = (err as { code?: string }).code;
    if (code !== '23505' && code !== '42P07') throw err;
  }
}

function int(n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new Error(`not a dimension: ${n}`);
  return n;
}
