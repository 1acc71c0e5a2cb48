/**
 * The retries a thread's workflow is waiting out, read from Temporal's description of the workflow
 * (its pending activities) rather than from the workflow: while Temporal retries an activity, the
 * workflow hears nothing until the last attempt fails, so its `lastError` stays empty for minutes.
 * Temporal knows the attempt, the failure of the one before and when the next one starts.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { ThreadActivities } from '../../activities/types.js';

/** An activity of the thread's workflow that failed at least once and is being retried. */
export interface ActivityRetry {
  /** The workflow's lane it runs in: `compaction`, `extraction`, `embedding`, `catch-up`, … */
  lane: string;
  /** The activity, e.g. `compactThread`. */
  activity: string;
  /** The attempt running or next to run (2 for the first retry). */
  attempt: number;
  /** Attempts allowed in all (absent: unbounded). */
  maximumAttempts?: number;
  /** Why the previous attempt failed. */
  lastError: string;
  /** When the next attempt starts (ISO 8601); absent while an attempt runs. */
  nextAttemptAt?: string;
}

/** The lane each activity runs in (workflows/lanes.ts). */
const LANES: Record<keyof ThreadActivities, string> = {
  compactThread: 'compaction',
  extractMemories: 'extraction',
  embedThread: 'embedding',
  loadMetas: 'catch-up',
  lastSeq: 'catch-up',
  saveConfig: 'config',
  deleteThread: 'delete',
  loadThread: 'load',
  expireThread: 'retention',
};

type PendingActivity = NonNullable<WorkflowExecutionDescription['raw']['pendingActivities']>[number];
type Failure = NonNullable<PendingActivity['lastFailure']>;
type Timestamp = NonNullable<PendingActivity['nextAttemptScheduleTime']>;

/** The pending activities that already failed once, as {@link ActivityRetry}s (oldest lane first). */
export function retriesOf(pending: readonly PendingActivity[] | null | undefined): ActivityRetry[] {
  const retries: ActivityRetry[] = [];
  for (const p of pending ?? []) {
    // A first attempt, or one whose predecessor left no failure (a reset), is not a retry.
    if ((p.attempt ?? 1) < 2 || !p.lastFailure) continue;
    const activity = p.activityType?.name ?? 'unknown';
    const next = msOf(p.nextAttemptScheduleTime);
    retries.push({
      lane: LANES[activity as keyof ThreadActivities] ?? activity,
      activity,
      attempt: p.attempt!,
      ...(p.maximumAttempts ? { maximumAttempts: p.maximumAttempts } : {}),
      lastError: failureText(p.lastFailure),
      ...(next === undefined ? {} : { nextAttemptAt: new Date(next).toISOString() }),
    });
  }
  return retries;
}

/** A failure's message with its causes' (an activity's error is often wrapped once or twice). */
function failureText(failure: Failure): string {
  const parts: string[] = [];
  for (let f: typeof failure | null | undefined = failure, depth = 0; f && depth < 4; depth++) {
    const type = f.applicationFailureInfo?.type;
    const text = f.message ?? '';
    // A cause's text is often repeated in its wrapper's message already.
    if (text && !parts.some((p) => p.includes(text))) parts.push(type ? `${type}: ${text}` : text);
    f = f.cause;
  }
  return parts.join(': ') || 'failed';
}

/** Milliseconds since the epoch of a protobuf timestamp (seconds may be a Long). */
function msOf(ts: Timestamp | null | undefined): number | undefined {
  if (!ts) return undefined;
  const seconds = Number(String(ts.seconds ?? 0));
  return seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}
