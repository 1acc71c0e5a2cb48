/**
 * `durable-memory working-memory get|set|versions`: the pinned block of a user (`--user`, with
 * `--resource` for one resource of theirs) or of a thread (`--thread`), through the client library's
 * `workingMemory(scope)`. `set` writes on top of `--replaces <version>` (the version read; not
 * `--version`, which prints the program's); a stale one is refused with the version to read again,
 * and nothing is written.
 */
import type { Command } from 'commander';
import type { WorkingMemory, WorkingMemoryScope } from '../../memories/working-memory.js';
import { renderWorkingMemory } from '../../thread/working-memory-block.js';
import { nextBefore } from '../../memories/working-memory-store.js';
import { characterCount } from '../../model/limits.js';
import { json, nonNegativeInt, positiveInt, readTextFile } from '../args.js';
import { UsageError } from '../errors.js';
import { note, printJson, printLines } from '../output.js';
import type { Session } from '../session.js';
import { TENANT_HELP } from './thread.js';

interface ScopeOptions {
  user?: string;
  resource?: string;
  thread?: string;
}

/** The stored scope the options name; a usage error unless exactly one of --user and --thread. */
function scopeOf(session: Session, o: ScopeOptions): WorkingMemoryScope {
  if (o.user !== undefined && o.thread !== undefined)
    throw new UsageError('--user and --thread: give one, not both');
  if (o.user === undefined && o.thread === undefined)
    throw new UsageError('name a user (--user, with --resource for one resource) or a thread (--thread)');
  if (o.thread !== undefined) {
    if (o.resource !== undefined) throw new UsageError('--resource goes with --user, not --thread');
    return { threadId: session.stored(o.thread) };
  }
  const userId = session.stored(o.user!);
  return o.resource === undefined ? { userId } : { userId, resourceId: o.resource };
}

/** A working memory as the caller sees it (ids without the tenant prefix). */
function shown(session: Session, wm: WorkingMemory): WorkingMemory {
  return session.scope ? session.scope.workingMemory(wm) : wm;
}

function withScopeOptions(command: Command): Command {
  return command
    .option('--user <userId>', "the user's working memory")
    .option('--resource <resourceId>', 'with --user: the working memory of one resource of theirs')
    .option('--thread <threadId>', "the thread's own working memory");
}

/** Registers `working-memory` and its subcommands. */
export function registerWorkingMemory(program: Command, session: Session): void {
  const wm = program
    .command('working-memory')
    .description('the pinned working memory of a user, resource or thread')
    .option('--tenant <name>', TENANT_HELP);

  withScopeOptions(wm.command('get'))
    .description('print the current version (version 0: never written)')
    .action(
      session.action(async (o: ScopeOptions) => {
        const scope = scopeOf(session, o); // a usage error before any connection
        const got = shown(session, await (await session.memory()).workingMemory(scope).get());
        if (session.json) return printJson(got);
        await printLines([`version ${got.version} (${got.format})`, renderWorkingMemory(got)]);
      }),
    );

  withScopeOptions(wm.command('set [content]'))
    .description('replace it with [content] (or --file), on top of the version read (--replaces)')
    .requiredOption(
      '--replaces <version>',
      'the version read, which this write replaces (0 for the first)',
      nonNegativeInt,
    )
    .option('--file <path>', 'read the content from this file (`-` reads stdin)')
    .option(
      '--format <format>',
      'markdown or json (the content is parsed as JSON); default: json when the working memory is JSON, else markdown',
    )
    .option('--schema <json>', 'a JSON Schema the JSON content must match from now on', json)
    .option('--no-schema', 'drop the schema in force')
    .action(
      session.action(
        async (
          content: string | undefined,
          o: ScopeOptions & { replaces: number; file?: string; format?: string; schema?: unknown },
        ) => {
          if (content !== undefined && o.file !== undefined)
            throw new UsageError('give the content as an argument or with --file, not both');
          if (content === undefined && o.file === undefined)
            throw new UsageError('give the content as an argument or with --file');
          const text = content ?? (await readTextFile(o.file!));
          const schema = o.schema === false ? null : (o.schema as Record<string, unknown> | undefined);
          const scope = scopeOf(session, o); // a usage error before any connection
          // The text is JSON (a usage error if it is not) with --format json or a schema, Markdown
          // with --format markdown; without either, JSON when the working memory it replaces is
          // (as update_working_memory reads a tool's text; with --no-schema, by its format alone).
          const flagged = o.format !== undefined ? o.format === 'json' : schema ? true : undefined;
          const given = flagged === undefined ? undefined : { value: flagged ? jsonContent(text) : text };
          const handle = (await session.memory()).workingMemory(scope);
          const replacesJson = async () => {
            const { takesJsonText } = await import('../../memories/working-memory.js');
            const current = await handle.get();
            return takesJsonText(schema === null ? { format: current.format } : current);
          };
          const value = given ? given.value : (await replacesJson()) ? jsonContent(text) : text;
          const written = await handle.set(value, {
            version: o.replaces,
            ...(o.format !== undefined ? { format: o.format as WorkingMemory['format'] } : {}),
            ...(schema !== undefined ? { schema } : {}),
          });
          if (session.json) return printJson(shown(session, written));
          await printLines([`wrote version ${written.version} (${written.format})`]);
        },
      ),
    );

  withScopeOptions(wm.command('versions'))
    .description('list the versions kept, newest first')
    .option(
      '--limit <n>',
      'at most this many (default 20; then it says where the next page starts)',
      positiveInt,
    )
    .option('--before <version>', 'only versions older than this one', positiveInt)
    .action(
      session.action(async (o: ScopeOptions & { limit?: number; before?: number }) => {
        const scope = scopeOf(session, o);
        const versions = await (
          await session.memory()
        )
          .workingMemory(scope)
          .history({ limit: o.limit, before: o.before });
        const next = nextBefore(versions);
        if (session.json)
          return printJson({
            versions: versions.map((v) => shown(session, v)),
            ...(next === undefined ? {} : { next }),
          });
        // Characters as the limit counts them: of the text stored, in code points.
        const { contentText } = await import('../../memories/working-memory.js');
        await printLines(
          versions.map(
            (v) =>
              `version ${v.version}  ${v.updatedAt ?? ''}  ${v.format}  ${characterCount(contentText(v))} chars`,
          ),
        );
        if (next !== undefined) note(`more: --before ${next}`);
      }),
    );
}

/**
 * The content as JSON. A usage error of our own, not the option parsers' (commander's kind, which
 * the command line takes as printed already: this one would have exited 2 without a word).
 */
function jsonContent(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`content: expected JSON (${(err as Error).message})`);
  }
}
