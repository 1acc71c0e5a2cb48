/**
 * `thread export` and `thread import`: a thread as one JSON file (history, compaction records,
 * summaries, configuration) and back.
 *
 * Import is resumable. The store's import appends by message id (a message already stored is skipped,
 * never stored twice) in batches of one transaction each, so the CLI feeds it the history a chunk at a
 * time and reports progress between chunks; a run killed midway loses at most the chunk in flight, and
 * the next run skips what is there. The compaction records and the configuration go last, in one pass
 * over the whole export (every message is already stored by then, so it only looks them up), because
 * summary positions are remapped against the full history.
 */
import { rename, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ThreadExport } from '../../store/types.js';
import { positiveInt, readJsonFile } from '../args.js';
import { UsageError } from '../errors.js';
import { int, note, printJson, printLines, write } from '../output.js';
import { Progress } from '../progress.js';
import type { Session } from '../session.js';

/** Messages per chunk: one store transaction each (the store's own batch size). */
const DEFAULT_CHUNK = 500;

/** Registers `thread export` and `thread import`. */
export function registerTransfer(thread: Command, session: Session): void {
  thread
    .command('export <threadId>')
    .description('write a thread as JSON (history, compaction records, summaries, configuration)')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(session.action((id: string, o: { out?: string }) => exportThread(session, id, o)));

  thread
    .command('import <file>')
    .description('restore an export (`-` reads stdin); resumable: running it again stores nothing twice')
    .option('--id <threadId>', 'import into this thread id instead of the exported one')
    .option('--chunk <n>', 'messages per transaction', positiveInt, DEFAULT_CHUNK)
    .action(
      session.action((file: string, o: { id?: string; chunk: number }) => importThread(session, file, o)),
    );
}

async function exportThread(session: Session, id: string, o: { out?: string }): Promise<void> {
  const exported = await (await session.memory()).thread(session.stored(id)).export();
  const data = session.scope ? session.scope.exportData(exported) : exported;
  const text = `${JSON.stringify(data, null, 2)}\n`;
  if (!o.out) return write(text); // the export is itself the one JSON document on stdout
  // Through a temporary file and a rename: an interrupted export never leaves half a file behind.
  const tmp = `${o.out}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, o.out);
  const counts = { messages: data.messages.length, compactions: data.compactions.length };
  if (session.json) return printJson({ threadId: id, out: o.out, ...counts });
  await printLines([
    `exported ${id}: ${int(counts.messages)} messages, ${int(counts.compactions)} compaction records → ${o.out}`,
  ]);
}

/** Reads and checks an export file (a usage error if it is missing or not an export). */
async function readExport(file: string): Promise<ThreadExport> {
  const data = (await readJsonFile(file)) as ThreadExport;
  const ok =
    data?.version === 1 &&
    typeof data.thread?.threadId === 'string' &&
    Array.isArray(data.messages) &&
    Array.isArray(data.compactions);
  if (!ok)
    throw new UsageError(`${file} is not a thread export (version 1); make one with \`thread export\``);
  return data;
}

async function importThread(session: Session, file: string, o: { id?: string; chunk: number }) {
  const read = await readExport(file);
  const memory = await session.memory();
  const threadId = o.id ?? read.thread.threadId;
  const target = session.stored(threadId);
  const handle = memory.thread(target); // validates the id before anything is written
  // With a tenant, the export's thread, user and compaction ids become the tenant's.
  const data = session.scope ? session.scope.importData(read, target) : read;
  const total = data.messages.length;
  const progress = new Progress({ label: 'importing', done: 'imported', unit: 'messages', total });
  const imported = await handle.import(data, {
    chunkSize: o.chunk,
    onProgress: ({ phase, done }) => {
      if (phase === 'messages') progress.update(done);
      if (phase === 'records') {
        progress.finish();
        if (!session.json && data.compactions.length > 0)
          note(`recording ${int(data.compactions.length)} compaction records…`);
      }
      if (phase === 'indexing' && !session.json)
        note('waiting for the thread’s workflow to index the history…');
    },
  });
  const result = {
    threadId,
    messages: total,
    imported: imported.imported,
    skipped: imported.skipped,
    compactions: data.compactions.length,
    indexedSeq: imported.indexedSeq,
  };
  if (session.json) return printJson(result);
  await printLines([
    `imported ${int(result.imported)} messages into ${threadId} (${int(result.skipped)} were already there), ` +
      `${int(result.compactions)} compaction records; indexed up to seq ${int(result.indexedSeq)}`,
  ]);
}
