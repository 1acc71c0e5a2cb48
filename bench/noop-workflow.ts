/**
 * The baseline of `npm run bench:pipeline`: a workflow that does nothing but answer. Its update and
 * its signal have no-op handlers, so their cost is the Temporal round trip alone (client → server →
 * worker → server → client for the update; client → server for the signal), measured on the same
 * server and worker as the thread workflow's appends.
 */
import { condition, defineSignal, defineUpdate, setHandler } from '@temporalio/workflow';

/** Answers at once, changing nothing. */
export const noopUpdate = defineUpdate<number, [number]>('noop');
/** Received and dropped. */
export const noopSignal = defineSignal<[number]>('noopSignal');

/** Registers the no-op handlers and waits until it is terminated. */
export async function noopWorkflow(): Promise<void> {
  setHandler(noopUpdate, (n) => n);
  setHandler(noopSignal, () => undefined);
  await condition(() => false);
}
