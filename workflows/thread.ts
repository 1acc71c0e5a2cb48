/**
 * The thread workflow: one long-running entity workflow per thread. Its messages (shared.ts) are
 * handled first, then a main loop waits for work, starts it in its lane (lanes.ts) and
 * continues-as-new before the server's limits, carrying the state (thread-state.ts). Message bodies
 * never pass through here: only ids, sequence numbers and counts.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { ValidationError } from '../src/model/errors.js';
import { IdleClose } from './idle-close.js';
import { Lanes } from './lanes.js';
import { PATCHES } from './patches.js';
import { ThreadState } from './thread-state.js';
import {
  appendedSignal,
  compactUpdate,
  configureUpdate,
  deleteUpdate,
  stateQuery,
  syncUpdate,
  type ThreadWorkflowInput,
} from './shared.js';

/**
 * Continue-as-new after this many history events, unless the server suggests it sooner. Far below
 * the server's 51,200 on purpose: under sustained appends a signal races the hand-over, the server
 * refuses the continue-as-new and then holds signals back (appends wait) while the worker replays the
 * whole run before trying again. That replay costs a few ms per workflow task, so a run's length is
 * the stall of every hand-over under load: 500 events stalled appends for about 600 ms at 100
 * appends/s. What a run carries does not grow with its length.
 */
const CAN_EVENTS = 150;

/** The thread workflow. See the module comment. */
export async function threadWorkflow(input: ThreadWorkflowInput): Promise<void> {
  const state = new ThreadState(input);
  state.compactAtViewBudget = patched(PATCHES.compactAtViewBudget);
  state.lastAppendFromStore = patched(PATCHES.lastAppendFromStore);
  const lanes = new Lanes(state, { heartbeatTimeoutMs: input.heartbeatTimeoutMs });
  const idleClose = patched(PATCHES.idleClose)
    ? new IdleClose(state, lanes, Date.now(), patched(PATCHES.extractOnClose))
    : undefined;

  // Set once the run hands over to the next (continue-as-new): commands are refused from then on,
  // with `handing_over`, and the client sends them again, to the next run. So the hand-over never
  // waits for a command, and no command starts work that the next run would have to carry.
  let handingOver = false;
  const notHandingOver = () => {
    if (handingOver)
      throw ApplicationFailure.nonRetryable('the thread hands over to its next run', 'handing_over');
  };
  const ready = () => {
    state.touch(Date.now()); // every command but delete comes here first: the thread is active
    return condition(() => state.ready);
  };

  setHandler(appendedSignal, (metas) => state.receive(metas, Date.now()));
  setHandler(stateQuery, () => ({ ...state.view(), activitiesInFlight: lanes.activitiesInFlight }));
  setHandler(
    compactUpdate,
    async () => {
      await ready();
      if (lanes.deleting) throw ApplicationFailure.nonRetryable('the thread is being deleted', 'not_found');
      return lanes.compact();
    },
    { validator: notHandingOver },
  );
  setHandler(
    configureUpdate,
    async (patch) => {
      await ready();
      const config = state.configure(patch);
      await lanes.saveConfig();
      return config;
    },
    {
      // Everything the workflow will store is checked here, with the store's own rules, before it
      // is applied: a rejected update leaves nothing behind to retry.
      validator: (patch) => {
        notHandingOver();
        try {
          state.validateConfigure(patch);
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          throw ApplicationFailure.nonRetryable(err.message, 'ValidationError', { code: err.code });
        }
      },
    },
  );
  setHandler(
    syncUpdate,
    async (args) => {
      await ready();
      const target = args?.seq ?? (await lanes.lastSeq());
      state.wantSeq = Math.max(state.wantSeq, target);
      await lanes.catchUp();
      if (state.indexedSeq < target) {
        throw ApplicationFailure.nonRetryable(`messages up to ${target} are not in the store`, 'not_found');
      }
      return state.view();
    },
    {
      validator: (args) => {
        notHandingOver();
        if (args?.seq !== undefined && (!Number.isInteger(args.seq) || args.seq < 0)) {
          throw new Error('sync.seq: expected a whole number ≥ 0');
        }
      },
    },
  );
  setHandler(deleteUpdate, () => lanes.delete(), { validator: notHandingOver });

  // A new run (not one continued as new) starts from what the store holds: an imported thread's
  // configuration, where its memory extraction stopped. Commands wait for it (see `ready`).
  if (!state.ready) {
    if (idleClose) await idleClose.resume();
    else state.resume(await lanes.loadThread());
  }

  const gapTimeout = input.gapTimeoutMs ?? 2000;
  const canAfter = input.continueAsNewAfterEvents ?? CAN_EVENTS;
  const continueAsNewDue = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= canAfter;
  // Once continue-as-new is due, no new LLM work starts (it is carried as due into the next run), and
  // the run continues as soon as the work in flight has landed.
  const mayStart = () => !continueAsNewDue();

  while (!state.deleted) {
    // One idle timer at a time, and only when there is idle work (re-armed lazily if appends came).
    // While an extraction runs, its messages are not idle work: no timer, no second extraction.
    const idleIn = lanes.extracting ? undefined : state.idleIn(Date.now());
    const idleAt = idleIn === undefined ? undefined : Date.now() + idleIn;
    idleClose?.arm(Date.now());
    const wake = () =>
      state.deleted ||
      state.needsCatchUp() ||
      (mayStart() && (lanes.compactionReady() || lanes.extractionReady() || lanes.embeddingReady())) ||
      // idle work appeared (or an extraction ended with some left): arm the timer
      (idleIn === undefined && !lanes.extracting && state.idleIn(Date.now()) !== undefined) ||
      // the idle time came nearer (a configure shortened idleMs): arm a shorter timer
      (idleAt !== undefined && (state.idleIn(Date.now()) ?? Infinity) + Date.now() < idleAt) ||
      (continueAsNewDue() && !lanes.llmBusy) ||
      idleClose?.wants(Date.now()) === true;
    const woke = idleIn === undefined ? (await condition(wake), true) : await condition(wake, idleIn);
    if (state.deleted) break;
    const idle = (!woke && state.idleIn(Date.now()) === 0) || idleClose?.idle(Date.now()) === true;

    if (state.hasGap() && state.wantSeq <= state.indexedSeq) {
      // Signals may arrive out of order: give the missing one a moment before reading the store.
      const filled = await condition(() => !state.hasGap() || state.deleted, gapTimeout);
      if (!filled) await lanes.catchUp();
    } else if (state.needsCatchUp()) {
      await lanes.catchUp();
    }
    // Each lane runs on its own (its failures are handled inside); the loop only starts them.
    if (mayStart() && lanes.compactionReady()) void lanes.compact();
    if (mayStart() && lanes.extractionReady(idle)) void lanes.extract();
    if (mayStart() && lanes.embeddingReady()) void lanes.embed();
    if (idleClose && (await idleClose.settle(Date.now()))) break; // closed after idling, or expired

    if (continueAsNewDue() && !lanes.llmBusy) {
      handingOver = true;
      await condition(allHandlersFinished);
      if (state.deleted) break;
      const { userId, resourceId } = state; // the stored owner, when the input had none
      await continueAsNew<typeof threadWorkflow>({
        ...input,
        userId,
        resourceId,
        config: undefined,
        carried: state.snapshot(),
      });
    }
  }
  // Deleted (or expired): `delete` already stopped the LLM work; let its own handler finish answering.
  // Closed after idling: no handler runs (the thread was quiet), the store keeps everything.
  await condition(allHandlersFinished);
}
