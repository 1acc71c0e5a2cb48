/**
 * `thread fork <threadId> <newId> [--at <messageId>]`: a new thread with the history of another up to
 * a message, which then goes on on its own (ThreadHandle.fork; the shared part is copied).
 */
import type { Command } from 'commander';
import { ValidationError } from '../../model/errors.js';
import { int, printJson, printLines } from '../output.js';
import type { Session } from '../session.js';

/** Registers `thread fork`. */
export function registerFork(thread: Command, session: Session): void {
  thread
    .command('fork <threadId> <newId>')
    .description(
      'a new thread <newId> with the history of <threadId> up to a message (copied with its configuration ' +
        'and the summaries of that part), which then goes on on its own',
    )
    .option('--at <messageId>', 'the last message the fork shares (default: the latest)')
    .action(session.action((id: string, newId: string, o: { at?: string }) => fork(session, id, newId, o)));
}

async function fork(session: Session, id: string, newId: string, o: { at?: string }): Promise<void> {
  const options = o.at === undefined ? {} : { at: o.at };
  let handle;
  try {
    // The library's checks first, so a bad argument is a usage error (exit 2) before any server is asked.
    // (Imported here: the client's fork module reaches the JSON Schema checker, which --help need not load.)
    const { checkFork } = await import('../../client/fork.js');
    checkFork(session.stored(id), session.stored(newId), options);
    handle = await (await session.memory()).thread(session.stored(id)).fork(session.stored(newId), options);
  } catch (err) {
    // The library names its option `at`; here it is the flag.
    if (err instanceof ValidationError && err.field === 'at')
      throw new ValidationError(err.code, err.message.replace(/^at:/u, '--at:'), err);
    throw err;
  }
  const origin = (await handle.info()).forkedFrom!;
  const forkedFrom = { ...origin, threadId: id };
  if (session.json) return printJson({ threadId: newId, forkedFrom });
  await printLines([
    `forked ${id} into ${newId} at message ${origin.messageId} (seq ${int(origin.seq)}): ` +
      `${int(origin.seq)} message${origin.seq === 1 ? '' : 's'} shared`,
  ]);
}
