/**
 * Full-text search over history (schema: 009_message_search.ts, 010_thread_search_index.ts). The
 * query's lexemes are OR-ed, so a question finds an answer that shares only some of its words, and
 * each matching message is scored with BM25: a term's document frequency is counted in the scope, the
 * collection size is the scope's message count (kept on the thread rows), and a message's length is
 * its number of distinct lexemes. Rare words therefore weigh more than words every other message
 * uses, which ts_rank (no IDF) cannot do. Term frequency counts as 1 (chat messages are short, and
 * reading positions would mean unnesting every hit's vector). Each hit also says how much of the query
 * it matches (`match`): its score over what a message of average length holding every searched term
 * would score (the sum of their IDFs), so about 1 for a message that says all the query says and
 * small for one sharing a word or two of a long query, whatever the query's length.
 *
 * Index-driven, whatever the history's size: each term is looked up in each thread of the scope (the
 * (thread_id, search) GIN index answers both at once), reading at most COMMON + 1 of its messages. A
 * term found in more than COMMON messages carries little information (BM25 gives it a small weight)
 * but would make every such message a hit to read and score, so it is dropped when rarer terms are
 * there (else the rarest one is kept, over the messages read). A search thus reads at most
 * terms × threads × (COMMON + 1) rows: never the whole history, never another thread's rows. Yet the
 * index hands over every entry of a term before the first row is read, so a common term costs most of
 * a long thread's search: terms a thread's searches found common are remembered ({@link CommonTerms})
 * and not probed again.
 *
 * One statement, one round trip, no planner settings: every table access is an index probe with a
 * thread id, which the planner does not answer with a scan of the table. It is a named (prepared)
 * statement: each connection parses it once. PostgreSQL still plans it for each call's values (it
 * keeps custom plans: its generic plan costs more), 0.3-0.5 ms of a search (BENCHMARKS.md "Where
 * context() with recall spends its time").
 *
 * On `messages` partitioned by thread (scripts/partition-messages.sql), a thread id taken from the
 * scope CTE prunes partitions only while running: the planner plans, and costs, all 64 partitions for
 * each reference to the table. So a thread's search also names its thread id, `$1`, beside each join on
 * it (`$1 IS NULL OR m.thread_id = $1`, true for a user's scope), and plans one partition: 1 ms of
 * planning instead of 8–38 (docs/scale.md). Knowing the thread, the planner also goes by its statistics:
 * a thread of one row is read by its primary key rather than the search index, and a long thread's
 * rare word is probed in the search index (9 ms where the join's average estimate had it read the
 * thread's 1,000 rows by the thread's btree index: 64 ms). A user's search names the user's thread ids
 * likewise (`$9`), when they are few ({@link NAMED_THREADS}).
 */
import type { Pool } from 'pg';
import type { SearchHit, SearchOptions } from '../types.js';
import { RETRACTS_KEY, retractionId } from '../../thread/retraction.js';

/**
 * Neither a retraction marker nor a message one takes back (src/thread/retraction.ts): they never
 * reach a model. The marker's id is fixed (`retraction:<id>`), so this is one probe of the unique key.
 */
export const NOT_RETRACTED = notRetracted();

/** {@link NOT_RETRACTED}, the marker also read under `also` (a condition on `r`). */
function notRetracted(also = ''): string {
  return `m.metadata->>'${RETRACTS_KEY}' IS NULL AND NOT EXISTS (
      SELECT 1 FROM messages r WHERE r.thread_id = m.thread_id AND r.id = '${retractionId('')}' || m.id${also})`;
}

/**
 * Whether the message `live` (thread_id, seq, created_at) opens its day in its thread
 * (`SearchHit.opensDay`): one probe of the primary key for the message before it. `named`, when
 * given, is a condition naming the thread searched beside the join (partitions, above).
 */
export function opensDaySql(named = ''): string {
  return `NOT EXISTS (
    SELECT 1 FROM messages p
    WHERE p.thread_id = live.thread_id${named ? ` AND ${named}` : ''} AND p.seq = live.seq - 1
      AND (p.created_at AT TIME ZONE 'UTC')::date = (live.created_at AT TIME ZONE 'UTC')::date)`;
}

/** BM25's usual constants: term-frequency saturation and length normalization. */
const K1 = 1.2;
const B = 0.75;

/** Messages of the scope above which a term is too common to search by (see above). */
export const COMMON_TERM = 100;

/**
 * Candidates ranked for each hit returned, before retracted messages are left out. Retractions are
 * rare: a search whose best candidates were mostly retracted returns fewer hits rather than read on.
 */
const RETRACTED_SLACK = 2;

/**
 * $1 thread id (or NULL), $2 user id, $3 resource id (or NULL), $4 text-search configuration,
 * $5 the query text, $6 limit, $7 and $8 the time range's ends (or NULL): a term's messages are read
 * within it, so matches outside it neither count against the common-term cutoff nor take the hits'
 * places; $9 the user's thread ids (or NULL): the scope, named beside each join as `$1` is. The
 * arithmetic is float8 (numeric's ln is slow).
 *
 * $10 lexemes known to be common in thread $1 (or NULL) and $11 that thread's `born` when they were
 * learned ({@link CommonTerms}; a thread of that id created since knows nothing): they are not probed
 * (`known`), unless every term of the query is. Each row also says which terms not known were found
 * common (`common`, NULL when none), whether a probed term is rare (`rare`), whether any was skipped
 * (`skipped`) and the thread's creation time (`born`): when none is rare the skipped terms decide the
 * ranking, and {@link searchPg} searches again without skipping, so the answer is always the one
 * probing every term gives.
 */
export const SEARCH_SQL = `
WITH scope AS MATERIALIZED (
  SELECT thread_id, message_count, extract(epoch FROM created_at)::float8 AS born FROM threads
  WHERE CASE WHEN $1::text IS NOT NULL THEN thread_id = $1
        WHEN $9::text[] IS NOT NULL THEN thread_id = ANY($9)
        ELSE user_id = $2 AND ($3::text IS NULL OR resource_id = $3) END
),
total AS MATERIALIZED (SELECT greatest(sum(message_count), 1)::float8 AS n FROM scope),
terms AS MATERIALIZED (
  -- Each lexeme quoted for tsquery input (quotes and backslashes escaped): matched as is.
  SELECT lexeme, ('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery AS tq,
    coalesce(lexeme = ANY($10::text[]) AND $1::text IS NOT NULL AND $7::timestamptz IS NULL
      AND $8::timestamptz IS NULL AND (SELECT born FROM scope WHERE thread_id = $1) = $11::float8, false) AS known
  FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector($4::regconfig, $5::text))) l
),
matches AS MATERIALIZED (
  SELECT t.lexeme, m.thread_id, m.seq, m.len
  FROM scope s CROSS JOIN terms t CROSS JOIN LATERAL (
    SELECT m.thread_id, m.seq, length(m.search)::float8 AS len FROM messages m
    WHERE m.thread_id = s.thread_id AND ($1::text IS NULL OR m.thread_id = $1)
      AND ($9::text[] IS NULL OR m.thread_id = ANY($9)) AND m.search @@ t.tq
      AND ($7::timestamptz IS NULL OR m.created_at >= $7) AND ($8::timestamptz IS NULL OR m.created_at <= $8)
    LIMIT ${COMMON_TERM + 1}
  ) m
  -- A query of known common terms only is searched by all of them (skipping would leave nothing).
  WHERE NOT t.known OR NOT EXISTS (SELECT 1 FROM terms u WHERE NOT u.known)
),
df AS MATERIALIZED (SELECT lexeme, count(*)::float8 AS n FROM matches GROUP BY lexeme),
kept AS MATERIALIZED (
  SELECT lexeme, n FROM df WHERE n <= ${COMMON_TERM}
  UNION ALL
  (SELECT lexeme, n FROM df WHERE NOT EXISTS (SELECT 1 FROM df WHERE n <= ${COMMON_TERM}) ORDER BY n LIMIT 1)
),
hits AS MATERIALIZED (SELECT m.thread_id, m.seq, m.len, k.n FROM matches m JOIN kept k ON k.lexeme = m.lexeme),
norm AS MATERIALIZED (
  SELECT greatest(avg(len), 1) AS avglen FROM (SELECT DISTINCT thread_id, seq, len FROM hits) d
),
-- What a message of average length holding every searched term would score: the sum of their IDFs.
ideal AS MATERIALIZED (
  SELECT greatest(sum(ln(1 + (t.n - k.n + 0.5) / (k.n + 0.5))), 1e-9) AS ideal FROM kept k CROSS JOIN total t
),
ranked AS MATERIALIZED (
  SELECT h.thread_id, h.seq,
    sum(ln(1 + (t.n - h.n + 0.5) / (h.n + 0.5)) * ${K1 + 1}
        / (1 + ${K1} * (${1 - B} + ${B} * h.len / nm.avglen))) AS score
  FROM hits h CROSS JOIN total t CROSS JOIN norm nm
  GROUP BY h.thread_id, h.seq
  ORDER BY score DESC, h.seq DESC, h.thread_id
  LIMIT $6 * ${RETRACTED_SLACK}
)
SELECT r.thread_id, r.seq, r.score, r.score / i.ideal AS match, live.created_at,
  ${opensDaySql('($1::text IS NULL OR p.thread_id = $1) AND ($9::text[] IS NULL OR p.thread_id = ANY($9))')} AS opens_day,
  (SELECT array_agg(d.lexeme) FROM df d JOIN terms t USING (lexeme) WHERE d.n > ${COMMON_TERM} AND NOT t.known)
    AS common,
  EXISTS (SELECT 1 FROM df WHERE n <= ${COMMON_TERM}) AS rare,
  EXISTS (SELECT 1 FROM terms WHERE known) AND EXISTS (SELECT 1 FROM terms WHERE NOT known) AS skipped,
  (SELECT born FROM scope LIMIT 1) AS born
FROM ranked r CROSS JOIN ideal i CROSS JOIN LATERAL (
  -- LATERAL with LIMIT: a primary-key probe per candidate, never a join over the table.
  SELECT m.thread_id, m.seq, m.created_at FROM messages m
  WHERE m.thread_id = r.thread_id AND ($1::text IS NULL OR m.thread_id = $1)
    AND ($9::text[] IS NULL OR m.thread_id = ANY($9)) AND m.seq = r.seq
    AND ${notRetracted(' AND ($9::text[] IS NULL OR r.thread_id = ANY($9))')}
  LIMIT 1
) live
ORDER BY r.score DESC, r.seq DESC, r.thread_id
LIMIT $6`;

/**
 * What one process has learned of its threads' common terms (more than {@link COMMON_TERM} messages
 * hold them), so a thread's search need not read them again: a common term is dropped from the
 * ranking whenever a rarer one is there, yet probing it reads every message index entry holding it
 * (a GIN index answers all or nothing): on a 10,000-message thread most of a search's time
 * (BENCHMARKS.md "Common terms known"). A thread's messages are deleted only with the thread, so a
 * term once common stays common in it; `born` (the thread's creation time) tells a new thread of the
 * same id, which knows nothing. Kept for the {@link COMMON_MEMO_THREADS} threads searched last, at
 * most {@link COMMON_MEMO_TERMS} terms each.
 */
export class CommonTerms {
  private readonly threads = new Map<string, { born: number; terms: Set<string>; literal: string }>();

  /** The $10 and $11 of {@link SEARCH_SQL} for a search of `threadId` (nulls when none is known). */
  known(threadId: string): [string | null, number | null] {
    const entry = this.threads.get(threadId);
    if (!entry) return [null, null];
    this.threads.delete(threadId); // most recently used last
    this.threads.set(threadId, entry);
    return [entry.literal, entry.born];
  }

  /** Records what a search of `threadId` answered (`common` and `born` of its rows). */
  learn(threadId: string, born: number, common: readonly string[] | null): void {
    let entry = this.threads.get(threadId);
    if (entry && entry.born !== born) {
      this.threads.delete(threadId); // another thread of that id: what was known is not
      entry = undefined;
    }
    if (!common?.length) return;
    entry ??= { born, terms: new Set(), literal: '{}' };
    for (const term of common) if (entry.terms.size < COMMON_MEMO_TERMS) entry.terms.add(term);
    // An array literal built once per change, not per search: each element quoted and escaped.
    entry.literal = `{${[...entry.terms].map((t) => `"${t.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
    this.threads.delete(threadId);
    this.threads.set(threadId, entry);
    if (this.threads.size > COMMON_MEMO_THREADS) this.threads.delete(this.threads.keys().next().value!);
  }

  /** Forgets `threadId` (deleted here). */
  forget(threadId: string): void {
    this.threads.delete(threadId);
  }
}

/**
 * Threads whose common terms {@link CommonTerms} keeps: at most about 16 MB of a process's heap, all
 * full (measured: 1,000 threads of 200 terms), far less for threads whose queries use few common words.
 */
export const COMMON_MEMO_THREADS = 1_000;

/** Common terms kept per thread: a chat's most frequent words, which its queries use most. */
export const COMMON_MEMO_TERMS = 200;

/** Runs {@link ThreadStore.search} with the text-search configuration `language`. */
export async function searchPg(
  pool: Pool,
  language: string,
  query: string,
  options: SearchOptions,
  limit: number,
  common?: CommonTerms,
): Promise<SearchHit[]> {
  const { scope } = options;
  const range = [instant(options.since), instant(options.until)];
  let rows: {
    thread_id: string;
    seq: string;
    score: number;
    match: number;
    created_at: Date;
    opens_day: boolean;
    common: string[] | null;
    rare: boolean;
    skipped: boolean;
    born: number;
  }[];
  if ('threadId' in scope) {
    // Only a search of the whole thread learns: within a time range a common term may be rare.
    const whole = range[0] === null && range[1] === null;
    const known = whole && common ? common.known(scope.threadId) : [null, null];
    const search = (skip: (string | number | null)[]) =>
      pool.query({
        name: 'dm-search',
        text: SEARCH_SQL,
        values: [scope.threadId, null, null, language, query, limit, ...range, null, ...skip],
      });
    ({ rows } = await search(known));
    // No term it read is rare (or none matched): the common terms it skipped decide the ranking, so
    // they are read too. Seldom twice for a query: the terms it read are known common after this.
    if (known[0] !== null && (rows.length === 0 || (rows[0]!.skipped && !rows[0]!.rare)))
      ({ rows } = await search([null, null]));
    if (whole && rows[0]) common?.learn(scope.threadId, rows[0].born, rows[0].common);
  } else {
    const user = [scope.userId, scope.resourceId ?? null];
    const threads = await threadsToName(pool, scope);
    if (threads?.length === 0) return [];
    // Unnamed, so planned with these ids (pruned by them); the named statement keeps one plan for
    // every user after five runs.
    ({ rows } = await pool.query(
      threads
        ? { text: SEARCH_SQL, values: [null, ...user, language, query, limit, ...range, threads, null, null] }
        : {
            name: 'dm-search',
            text: SEARCH_SQL,
            values: [null, ...user, language, query, limit, ...range, null, null, null],
          },
    ));
  }
  return rows.map((r) => ({
    threadId: r.thread_id,
    seq: Number(r.seq),
    score: r.score,
    match: r.match,
    createdAt: r.created_at.toISOString(),
    opensDay: r.opens_day,
  }));
}

/**
 * Most threads of a user a search names. Each adds up to one partition to plan, and a long list makes
 * the plan slower than planning them all: 64 partitions, 20,000 threads, PostgreSQL 15, a user of
 * 1–8 threads searched in 13–19 ms by naming them and 39–65 ms by the user's id, 16 in 35 vs 60 ms,
 * 32 in 68 vs 53, 200 in 385 vs 90 (at load 10; BENCHMARKS.md "A user's search after partitioning").
 */
export const NAMED_THREADS = 16;

/**
 * The ids of a user's threads (of one resource if given) for a search to name beside each join on
 * `messages`, when that table is partitioned by thread (docs/scale.md) and the user has at most
 * {@link NAMED_THREADS}; else undefined: search by the user's id. The planner prunes partitions by the
 * values a statement names, never by the thread ids a join reads from `threads` (it plans all 64
 * partitions then: 27–36 ms). On one table naming them would only add a plan per search.
 */
export async function threadsToName(
  pool: Pool,
  scope: { userId: string; resourceId?: string },
): Promise<string[] | undefined> {
  if (!(await messagesPartitioned(pool))) return undefined;
  const { rows } = await pool.query<{ thread_id: string }>(
    'SELECT thread_id FROM threads WHERE user_id = $1 AND ($2::text IS NULL OR resource_id = $2) LIMIT $3',
    [scope.userId, scope.resourceId ?? null, NAMED_THREADS + 1],
  );
  return rows.length > NAMED_THREADS ? undefined : rows.map((r) => r.thread_id);
}

const partitioned = new WeakMap<Pool, Promise<boolean>>();

/**
 * Whether `messages` is partitioned, read once per pool: scripts/partition-messages.sql runs with the
 * product stopped. Either answer gives the same hits; only the plans differ.
 */
function messagesPartitioned(pool: Pool): Promise<boolean> {
  let known = partitioned.get(pool);
  if (!known) {
    known = pool
      .query<{ p: boolean }>("SELECT relkind = 'p' AS p FROM pg_class WHERE oid = 'messages'::regclass")
      .then((r) => r.rows[0]?.p === true);
    partitioned.set(pool, known);
    // A failed read (the server away) is read again by the next search.
    known.catch(() => partitioned.delete(pool));
  }
  return known;
}

/** A range's end as a timestamptz parameter, or null for none. */
export function instant(at: number | undefined): string | null {
  return at === undefined ? null : new Date(at).toISOString();
}
