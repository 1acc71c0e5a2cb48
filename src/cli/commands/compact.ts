/**
 * `durable-memory thread compact <id>` runs a thread's strategy now; `--all` does so for every thread
 * (or every thread of `--user`), in id order, with progress. Compacting a thread twice is harmless
 * (the second run finds nothing over the trigger), so bulk compaction keeps no state of its own: it
 * prints each thread as it is done, and on Ctrl-C the `--after` that resumes where it stopped.
 */
import type { Command } from 'commander';
import type { DurableMemory } from '../../client/connect.js';
import { UnknownThreadError } from '../../client/errors.js';
import type { reportOf } from '../../compaction/compaction.js';
import { UsageError } from '../errors.js';
import { int, note, printJson, printLines } from '../output.js';
import { Progress } from '../progress.js';
import type { Session } from '../session.js';

interface CompactOptions {
  all?: boolean;
  user?: string;
  after?: string;
}

/** Registers `thread compact`. */
export function registerCompact(thread: Command, session: Session): void {
  thread
    .command('compact [threadId]')
    .description("run a thread's compaction strategy now (--all: every thread, with progress)")
    .option('--all', 'every thread (resumable with --after)')
    .option('--user <userId>', "with --all: only this user's threads")
    .option('--after <threadId>', 'with --all: start after this thread id (resume)')
    .action(
      session.action(async (id: string | undefined, o: CompactOptions) => {
        if (id && o.all) throw new UsageError('give a thread id or --all, not both');
        if (!id && !o.all) throw new UsageError('give a thread id, or --all for every thread');
        if (!o.all && (o.user || o.after)) throw new UsageError('--user and --after go with --all');
        return id ? compactOne(session, id) : compactAll(session, o);
      }),
    );
}

/** One line about what a compaction did. */
export function describeCompaction(summary: ReturnType<typeof reportOf> | null): string {
  if (!summary) return 'compaction failed (see `thread show` for the error)';
  if (summary.excludedGroups === 0 && summary.summaries === 0)
    return `nothing to do (${int(summary.includedTokensAfter)} tokens in view)`;
  const parts = [`excluded ${int(summary.excludedGroups)} groups`];
  if (summary.summaries) parts.push(`${summary.summaries} summaries`);
  return (
    `${parts.join(', ')}; ${int(summary.includedTokensBefore)} → ` +
    `${int(summary.includedTokensAfter)} tokens (${summary.strategy})`
  );
}

async function compactOne(session: Session, id: string): Promise<void> {
  const handle = (await session.memory()).thread(session.stored(id));
  const compacted = await handle.compact();
  const summary = session.scope ? session.scope.compaction(compacted) : compacted;
  if (!summary) {
    const state = await handle.state().catch(() => undefined);
    throw new Error(`compaction of ${id} failed: ${state?.lastError ?? 'see the worker log'}`);
  }
  if (session.json) return printJson({ threadId: id, compaction: summary });
  await printLines([`${id}: ${describeCompaction(summary)}`]);
}

/**
 * Every thread id to compact, in id order (read first, so the progress has a total); with a tenant,
 * that tenant's threads only, by their ids as the tenant knows them.
 */
async function threadIds(session: Session, memory: DurableMemory, o: CompactOptions): Promise<string[]> {
  const scope = session.scope;
  const userId = o.user !== undefined ? session.stored(o.user) : undefined;
  const ids: string[] = [];
  for (let after = o.after !== undefined ? session.stored(o.after) : scope?.prefix; ;) {
    const page = await memory.store.listThreads({ userId, after, limit: 500 });
    const mine = scope ? page.filter((t) => scope.owns(t.threadId)) : page;
    ids.push(...mine.map((t) => (scope ? scope.strip(t.threadId) : t.threadId)));
    if (page.length < 500 || mine.length < page.length) return ids;
    after = page[page.length - 1]!.threadId;
  }
}

interface Outcome {
  threadId: string;
  compaction?: ReturnType<typeof reportOf> | null;
  error?: string;
}

async function compactAll(session: Session, o: CompactOptions): Promise<void> {
  const memory = await session.memory();
  const ids = await threadIds(session, memory, o);
  const progress = new Progress({
    label: 'compacting',
    done: 'compacted',
    unit: 'threads',
    total: ids.length,
  });
  // Ctrl-C finishes the thread in hand, then stops; a second Ctrl-C stops at once.
  let interrupted = false;
  const onSigint = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    progress.log('stopping after the current thread (Ctrl-C again to stop now)…');
  };
  process.on('SIGINT', onSigint);
  const outcomes: Outcome[] = [];
  try {
    for (const id of ids) {
      if (interrupted) break;
      const outcome: Outcome = { threadId: id };
      try {
        const compaction = await memory.thread(session.stored(id)).compact();
        outcome.compaction = session.scope ? session.scope.compaction(compaction) : compaction;
        if (outcome.compaction === null) outcome.error = 'compaction failed';
      } catch (err) {
        if (err instanceof UnknownThreadError) continue; // deleted since the listing: nothing to do
        outcome.error = err instanceof Error ? err.message : String(err);
      }
      outcomes.push(outcome);
      const line = `${id}: ${outcome.error ? `failed: ${outcome.error}` : describeCompaction(outcome.compaction!)}`;
      // Each thread done is named, so an interrupted run shows where it got to.
      if (progress.isTty) progress.log(line);
      progress.update(outcomes.length, progress.isTty ? '' : line);
    }
  } finally {
    process.off('SIGINT', onSigint);
    progress.finish();
  }
  const failed = outcomes.filter((x) => x.error).length;
  const last = outcomes[outcomes.length - 1]?.threadId;
  const tenant = session.scope ? ` --tenant ${session.scope.tenant}` : '';
  const resume =
    interrupted && last ? `durable-memory thread compact --all --after ${last}${tenant}` : undefined;
  if (resume) note(`interrupted after ${outcomes.length}/${ids.length} threads; resume with: ${resume}`);
  if (session.json) await printJson({ threads: outcomes, total: ids.length, failed, interrupted, resume });
  else await printLines([`compacted ${outcomes.length - failed}/${ids.length} threads, ${failed} failed`]);
  if (failed > 0 || interrupted) process.exitCode = 1;
}
