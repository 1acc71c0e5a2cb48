/**
 * `durable-memory memories ls|remember|forget|rm`: a user's long-term memories (facts learned from
 * their threads, shared across them). `remember` stores a fact the user confirmed (optionally
 * expiring); `forget` takes a fact that stopped being true out of the live memories and keeps it in
 * history (superseded, with why); `rm` is a real delete, for a user's request to erase something.
 */
import type { Command } from 'commander';
import { NotFoundError } from '../errors.js';
import { clip, note, oneLine, printJson, printLines, table, terminalWidth } from '../output.js';
import type { Session } from '../session.js';
import { forgetReason, parseFutureExpiresAt, type MemoryRecord } from '../../memories/memory-store.js';
import { positiveInt } from '../args.js';
import { TENANT_HELP } from './thread.js';
import { DurableMemoryError, ValidationError } from '../../model/errors.js';

/** `memories remember`'s own flags. */
interface RememberFlags {
  user: string;
  expiresAt?: string;
  category?: string;
  thread?: string;
  messageIds?: string[];
  toolCallId?: string;
}

/** `memories ls`'s flags. */
interface ListFlags {
  user: string;
  all?: boolean;
  limit?: number;
  after?: string;
}

/**
 * A refusal of the library's `field` told by the flag that gave it (`expiresAt` is `--expires-at`),
 * as every other refusal of the command line is; any other error as it is.
 */
function byFlag(err: unknown, field: string, flag: string): unknown {
  if (!(err instanceof ValidationError) || err.field !== field || !err.message.startsWith(`${field}:`))
    return err;
  return new ValidationError(err.code, `${flag}${err.message.slice(field.length)}`, { ...err, field: flag });
}

/**
 * A page of the user's memories (every one without --limit), as the caller's ids, and where the next
 * page starts (a token holding the last memory's place, which outlives that memory). `--after` is
 * that token or, with a tenant, an extracted memory's id (stored with the tenant's prefix) or a
 * remembered one's (stored as is), as the HTTP API takes them.
 */
async function listMemories(
  session: Session,
  o: ListFlags,
): Promise<{ list: MemoryRecord[]; next?: string }> {
  const memories = (await session.memory()).userMemories(session.stored(o.user));
  const scope = session.scope;
  const includeSuperseded = Boolean(o.all);
  const page = async (after: string | undefined): Promise<{ list: MemoryRecord[]; next?: string }> => {
    const given = after === undefined ? {} : { after };
    if (o.limit === undefined) return { list: await memories.list({ includeSuperseded, ...given }) };
    const { memories: list, next } = await memories.page({ includeSuperseded, limit: o.limit, ...given });
    return next === undefined ? { list } : { list, next };
  };
  let found: { list: MemoryRecord[]; next?: string };
  try {
    if (o.after === undefined || !scope || o.after.startsWith('~')) found = await page(o.after);
    else
      try {
        found = await page(scope.prefix + o.after);
      } catch (err) {
        if (!(err instanceof ValidationError && err.field === 'after')) throw err;
        found = await page(o.after);
      }
  } catch (err) {
    throw byFlag(err, 'after', '--after');
  }
  return { ...found, list: found.list.map((m) => (scope ? scope.memory(m) : m)) };
}

/**
 * One memory of the user by the caller's id (live or superseded). With a tenant, an extracted
 * memory is stored with the tenant's prefix and a remembered one as is, as the HTTP API looks it up.
 * @throws NotFoundError when the user has neither.
 */
async function findMemory(session: Session, user: string, memoryId: string): Promise<MemoryRecord> {
  const memories = (await session.memory()).userMemories(session.stored(user));
  const found =
    (session.scope ? await memories.get(session.stored(memoryId)) : undefined) ??
    (await memories.get(memoryId));
  if (!found) throw new NotFoundError(`memory ${memoryId} of user ${user} does not exist`);
  return found;
}

/** Registers `memories` and its subcommands. */
export function registerMemories(program: Command, session: Session): void {
  const memories = program
    .command('memories')
    .description("a user's long-term memories")
    .option('--tenant <name>', TENANT_HELP);

  memories
    .command('ls')
    .description("list a user's memories, newest first (live ones unless --all; all of them unless --limit)")
    .requiredOption('--user <userId>', 'whose memories')
    .option('--all', 'also superseded memories (kept, with when and why)')
    .option('--limit <n>', 'at most this many (then it says where the next page starts)', positiveInt)
    .option('--after <memoryId>', "only memories after this one (the previous page's next)")
    .action(
      session.action(async (o: ListFlags) => {
        const { list, next } = await listMemories(session, o);
        if (session.json)
          return printJson({ userId: o.user, memories: list, ...(next === undefined ? {} : { next }) });
        if (list.length === 0) return note(`no memories for ${o.user}`);
        // The text takes what the other columns leave of the terminal.
        const idWidth = Math.max(...list.map((m) => m.id.length));
        const textWidth = Math.max(20, terminalWidth() - idWidth - 34);
        const rows = list.map((m) => [
          m.id,
          m.status === 'active' ? 'live' : 'superseded',
          m.createdAt.slice(0, 16).replace('T', ' '),
          clip(oneLine(m.text), textWidth),
        ]);
        await printLines(table(rows, ['ID', 'STATUS', 'CREATED', 'TEXT']));
        // Quoted: a shell would expand the token's leading `~` (zsh refuses it unquoted).
        if (next !== undefined) note(`more: --after '${next}'`);
      }),
    );

  memories
    .command('remember <text>')
    .description('store a fact the user confirmed; prints the memory holding it')
    .requiredOption('--user <userId>', 'whose memory')
    .option(
      '--expires-at <date>',
      'ISO-8601 date and time with its zone (2030-01-31T00:00:00Z) after which no read returns it',
    )
    .option('--category <name>', 'free-form grouping, e.g. preference')
    .option('--thread <threadId>', "the thread it came from (one of the user's)")
    .option('--message-ids <messageId...>', 'the messages of --thread it came from')
    .option('--tool-call-id <id>', 'the tool call that recorded it')
    .action(
      session.action(async (text: string, o: RememberFlags) => {
        // Checked before any server is asked: a bad date is a usage error.
        if (o.expiresAt !== undefined)
          try {
            parseFutureExpiresAt(o.expiresAt, Date.now());
          } catch (err) {
            throw byFlag(err, 'expiresAt', '--expires-at');
          }
        if (o.messageIds !== undefined && o.thread === undefined)
          throw new ValidationError(
            'invalid_option',
            '--message-ids: the messages of a thread; give --thread too',
            { field: 'messageIds' },
          );
        const stored = await (await session.memory()).userMemories(session.stored(o.user)).remember(text, {
          expiresAt: o.expiresAt,
          category: o.category,
          // As the HTTP API and MCP store it: the tenant's thread; message ids are the thread's own.
          ...(o.thread === undefined ? {} : { threadId: session.stored(o.thread) }),
          ...(o.messageIds === undefined ? {} : { messageIds: o.messageIds }),
          ...(o.toolCallId === undefined ? {} : { toolCallId: o.toolCallId }),
        });
        const memory = session.scope ? session.scope.memory(stored) : stored;
        if (session.json) return printJson({ userId: o.user, memory });
        await printLines([
          `remembered ${memory.id} for ${o.user}` + (memory.expiresAt ? ` until ${memory.expiresAt}` : ''),
        ]);
      }),
    );

  memories
    .command('forget <memoryId>')
    .description('stop using a memory: it leaves the live ones and stays in history (superseded, with why)')
    .requiredOption('--user <userId>', 'whose memory')
    .option('--reason <text>', 'why, kept with it (default "forgotten by user")')
    .action(
      session.action(async (memoryId: string, o: { user: string; reason?: string }) => {
        // Checked before any server is asked (the library's own check): a bad reason is a usage error.
        try {
          if (o.reason !== undefined) forgetReason(o.reason);
        } catch (err) {
          throw byFlag(err, 'reason', '--reason');
        }
        const found = await findMemory(session, o.user, memoryId);
        const memories = (await session.memory()).userMemories(session.stored(o.user));
        const forgotten =
          found.status === 'active'
            ? await memories.forget(found.id, o.reason === undefined ? {} : { reason: o.reason })
            : undefined;
        // Superseded before (or between the lookup and now): history already, nothing to forget.
        if (!forgotten)
          throw new DurableMemoryError(
            'memory_superseded',
            `memory ${memoryId} of user ${o.user} is superseded already (see memories ls --all)`,
          );
        const memory = session.scope ? session.scope.memory(forgotten) : forgotten;
        if (session.json) return printJson({ userId: o.user, memory });
        await printLines([`forgot memory ${memoryId} of ${o.user} (kept in history: memories ls --all)`]);
      }),
    );

  memories
    .command('rm <memoryId>')
    .description('delete one memory of a user (for good)')
    .requiredOption('--user <userId>', 'whose memory')
    .action(
      session.action(async (memoryId: string, o: { user: string }) => {
        // Found as `ls` shows it (with a tenant: extracted ones prefixed, remembered ones as is).
        const found = await findMemory(session, o.user, memoryId);
        const removed = await (await session.memory()).userMemories(session.stored(o.user)).remove(found.id);
        if (!removed) throw new NotFoundError(`memory ${memoryId} of user ${o.user} does not exist`);
        if (session.json) return printJson({ userId: o.user, memoryId, removed: true });
        await printLines([`removed memory ${memoryId} of ${o.user}`]);
      }),
    );
}
