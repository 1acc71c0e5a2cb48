/**
 * `durable-memory user delete <userId>`: erases everything of a user (threads, messages, summaries,
 * memories) through the client library's `deleteUser`, and prints the counts.
 */
import type { Command } from 'commander';
import { printJson, printLines } from '../output.js';
import type { Session } from '../session.js';
import { TENANT_HELP } from './thread.js';

/** Registers `user` and its subcommands. */
export function registerUser(program: Command, session: Session): void {
  const user = program
    .command('user')
    .description('a user of the threads')
    .option('--tenant <name>', TENANT_HELP);

  user
    .command('delete <userId>')
    .description('erase every thread, message, summary and long-term memory of a user')
    .action(
      session.action(async (userId: string) => {
        const erased = await (await session.memory()).deleteUser(session.stored(userId));
        const shown = { ...erased, userId };
        if (session.json) return printJson(shown);
        await printLines([
          `erased user ${userId}: ${erased.threads} threads, ${erased.messages} messages, ` +
            `${erased.summaries} summaries, ${erased.memories} memories`,
        ]);
      }),
    );
}
