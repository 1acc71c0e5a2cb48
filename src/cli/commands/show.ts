/**
 * `durable-memory thread show <id>`: history and view side by side (see show-render.ts),
 * built from the export (history with `excludedBy`, compaction records, summaries), `context()` (the
 * tokens used and what the next model call gets) and the workflow's state.
 */
import type { Command } from 'commander';
import type { ThreadHandle, ThreadState } from '../../client/thread-handle.js';
import { DEFAULT_CONFIG } from '../../thread/config.js';
import { BackendUnavailableError, reasonOf } from '../../settings/errors.js';
import { positiveInt } from '../args.js';
import { printJson, printLines, terminalWidth } from '../output.js';
import type { Session } from '../session.js';
import { showRows, type ContextFacts } from '../show-model.js';
import { renderShow } from '../show-render.js';

/** How long `show` waits for the workflow's state before showing the rest without it. */
const STATE_TIMEOUT_MS = 5000;

/** Registers `thread show`. */
export function registerShow(thread: Command, session: Session): void {
  thread
    .command('show <threadId>')
    .description('history and view side by side: what is excluded and why, summaries, budget')
    .option(
      '--width <columns>',
      'lay out for this many columns (default: the terminal’s, else 80)',
      positiveInt,
    )
    .action(session.action((id: string, o: { width?: number }) => show(session, id, o)));
}

/** The workflow's state, or why it is not available (no worker, Temporal slow) within a bound. */
async function stateOf(handle: ThreadHandle): Promise<ThreadState | { error: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ error: string }>((resolve) => {
    timer = setTimeout(
      () => resolve({ error: `no answer within ${STATE_TIMEOUT_MS / 1000} s; is a worker running?` }),
      STATE_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([
      handle.state().catch((err: unknown) => ({ error: stateError(err) })),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why the state is missing, short enough for the header line. */
function stateError(err: unknown): string {
  if (err instanceof BackendUnavailableError)
    return `Temporal unreachable at ${err.address}: ${reasonOf(err.cause)}`;
  return err instanceof Error ? err.message : String(err);
}

async function show(session: Session, id: string, o: { width?: number }): Promise<void> {
  const handle = (await session.memory()).thread(session.stored(id));
  const exported = await handle.export(); // UnknownThreadError (exit 3) for a thread that does not exist
  const data = session.scope ? session.scope.exportData(exported) : exported;
  const [context, withoutRecall, stored] = await Promise.all([
    handle.context(),
    handle.context({ recall: false }), // to tell which drops the recalled block caused
    stateOf(handle),
  ]);
  const scope = session.scope;
  const state = scope && !('error' in stored) ? scope.threadState(stored) : stored;
  const facts: ContextFacts = {
    tokens: context.tokens,
    budget: context.budget,
    split: context.split,
    droppedOnRead: context.droppedOnRead,
    messageIds: new Set(context.messages.map((m) => m.id)),
    withoutRecallIds: new Set(withoutRecall.messages.map((m) => m.id)),
  };
  const rows = showRows(data, facts);
  const model = (data.thread.config?.['model'] as string | undefined) ?? DEFAULT_CONFIG.model;
  if (session.json) {
    return printJson({
      threadId: id,
      thread: data.thread,
      context: {
        tokens: facts.tokens,
        budget: facts.budget,
        split: facts.split,
        droppedOnRead: facts.droppedOnRead,
      },
      state,
      rows,
      compactions: data.compactions,
    });
  }
  const width = o.width ?? terminalWidth();
  await printLines(
    renderShow(
      rows,
      {
        threadId: id,
        userId: data.thread.userId,
        model,
        context: facts,
        state,
        compactions: data.compactions,
      },
      width,
    ),
  );
}
