/**
 * The one way our stores open a `pg` pool. With tracing off it is a plain `pg.Pool`; on, every
 * statement is a client span (`pg.query:SELECT`, with the SQL text: parameters are never recorded,
 * so no message body reaches a trace) under the span that issued it.
 */
import { context } from '@opentelemetry/api';
import pg from 'pg';
import { failSpan, SpanKind, startSpan, tracingEnabled } from '../observability/tracing.js';

/** Longest SQL text kept on a span. */
const MAX_STATEMENT = 2000;

/**
 * The database URL's parameter that turns named (prepared) statements off: `?prepared_statements=false`.
 * Behind a pooler in transaction mode (PgBouncer before 1.21, or without `max_prepared_statements`)
 * each statement may run on another server connection, where a statement prepared on the first is
 * missing or already there, and the pooler refuses it. Unnamed, each is planned on every run instead.
 */
export const PREPARED_PARAM = 'prepared_statements';

/** pg hands a pool's options to each client it creates: this one says to run statements unnamed. */
interface StoreClientConfig extends pg.ClientConfig {
  unnamedStatements?: boolean;
}

/**
 * Opens a pool (traced when tracing is on) whose connections run without JIT compilation (see
 * {@link NoJitClient}), and without named statements when the URL says `prepared_statements=false`.
 */
export function newPool(config: pg.PoolConfig): pg.Pool {
  const url = withoutPreparedParam(config.connectionString);
  const options = { ...config, ...url };
  return tracingEnabled() ? new TracedPool(options) : new pg.Pool({ ...options, Client: NoJitClient });
}

/**
 * `connectionString` without {@link PREPARED_PARAM} (pg would pass it to the server as a setting),
 * and whether it turned statements unnamed. Anything but a URL is left as it is.
 * @throws Error naming the parameter when its value is neither true nor false
 */
function withoutPreparedParam(connectionString: string | undefined): {
  connectionString?: string;
  unnamedStatements?: boolean;
} {
  if (connectionString === undefined || !/^postgres(ql)?:/u.test(connectionString)) return {};
  const url = new URL(connectionString);
  const value = url.searchParams.get(PREPARED_PARAM);
  if (value === null) return {};
  if (value !== 'true' && value !== 'false')
    throw new Error(`database URL: ${PREPARED_PARAM} must be true or false, got ${JSON.stringify(value)}`);
  url.searchParams.delete(PREPARED_PARAM);
  return { connectionString: url.toString(), unnamedStatements: value === 'false' };
}

/** A `client.query(...)` call's arguments with the statement's name left out. */
function unnamed(args: unknown[]): unknown[] {
  const [first, ...rest] = args;
  if (typeof first !== 'object' || first === null || !('name' in first)) return args;
  if (typeof (first as { submit?: unknown }).submit === 'function') return args;
  const { name: _name, ...statement } = first as { name?: unknown };
  return [statement, ...rest];
}

/**
 * A client that turns JIT compilation off once connected, before the pool hands it out. Every
 * statement of ours is a few index probes, which JIT only slows down; and on `messages` partitioned
 * (docs/scale.md) the planner costs a search over a user's threads over all 64 partitions (it prunes
 * them only when running), past `jit_above_cost`: 1.5–25 s of compiling for a query of milliseconds
 * (measured on PostgreSQL 15, BENCHMARKS.md "Threads at rest"). A SET rather than a startup option,
 * which PgBouncer refuses.
 */
class NoJitClient extends pg.Client {
  constructor(config?: string | StoreClientConfig) {
    super(config);
    if (typeof config === 'object' && config.unnamedStatements) {
      const query = this.query.bind(this) as Query;
      (this as unknown as { query: Query }).query = (...args) => query(...unnamed(args));
    }
  }

  override connect(): Promise<pg.Client>;
  override connect(callback: Connected): void;
  override connect(callback?: Connected): Promise<pg.Client> | void {
    const ready = super.connect().then(async () => {
      await this.query('SET jit = off');
      return this;
    });
    if (!callback) return ready;
    // pg-pool connects with a callback.
    const done = callback as (err: Error | null, client?: pg.Client) => void;
    ready.then(
      (client) => done(null, client),
      (err: Error) => done(err),
    );
  }
}

type Connected = ((err: Error) => void) | ((err: null, client: pg.Client) => void);

type Query = (...args: unknown[]) => unknown;

/** Runs one `client.query(...)` call in a span; cursors and streams (submittables) pass untraced. */
function tracedQuery(query: Query, args: unknown[], database: string | undefined): unknown {
  const first = args[0] as { submit?: unknown; text?: unknown } | string | undefined;
  if (typeof first === 'object' && typeof first?.submit === 'function') return query(...args);
  const text = typeof first === 'string' ? first : typeof first?.text === 'string' ? first.text : '';
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  const span = startSpan(
    `pg.query:${operation}`,
    {
      'db.system': 'postgresql',
      'db.operation': operation,
      'db.statement': text.slice(0, MAX_STATEMENT),
      ...(database ? { 'db.name': database } : {}),
    },
    SpanKind.CLIENT,
  );
  if (!span) return query(...args);
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function') {
    // The pool's own query() uses the callback form.
    args[last] = (err: unknown, result: unknown) => {
      if (err) failSpan(span, err);
      span.end();
      (callback as (err: unknown, result: unknown) => void)(err, result);
    };
    return query(...args);
  }
  return (query(...args) as Promise<unknown>).then(
    (result) => {
      span.end();
      return result;
    },
    (err: unknown) => {
      failSpan(span, err);
      span.end();
      throw err;
    },
  );
}

/** A client whose statements are spans. */
class TracedClient extends NoJitClient {
  constructor(config?: string | StoreClientConfig) {
    super(config);
    const query = this.query.bind(this) as Query;
    (this as unknown as { query: Query }).query = (...args) => tracedQuery(query, args, this.database);
  }
}

/**
 * A pool of traced clients. Its callback-form `connect` (which its own `query()` uses) runs the
 * callback in the caller's context: a client handed over by another request's release would
 * otherwise parent the statement under that request.
 */
class TracedPool extends pg.Pool {
  constructor(config: pg.PoolConfig) {
    super({ ...config, Client: TracedClient });
    const connect = this.connect.bind(this) as (...args: unknown[]) => unknown;
    (this as unknown as { connect: unknown }).connect = (...args: unknown[]) => {
      const callback = args[0];
      if (typeof callback === 'function') args[0] = context.bind(context.active(), callback);
      return connect(...args);
    };
  }
}
