/**
 * Patch ids of the thread workflow. A change to workflow logic that alters its commands (an activity,
 * timer or continue-as-new added, removed or reordered) goes behind `patched(PATCHES.x)`, so runs that
 * began before it replay on the old path. List its id here and record a new history generation with it
 * (test/support/record-histories.ts): the replay test checks that the recorded histories replay each
 * patch both ways. A patch is removed (after `deprecatePatch`) only once no run from before it can be open.
 */
export const PATCHES: Readonly<Record<string, string>> = {
  /** A configure that shortens idleMs re-arms a waiting idle timer (it waited out the old one). */
  idleRearm: 'idle-rearm',
  /** Runs continue as new after 150 events, not 500: a shorter replay when a signal races the hand-over. */
  shortRuns: 'short-runs',
  /** The embedding lane: stored messages get vectors in the background (embedThread activities). */
  embeddings: 'embeddings',
  /**
   * A worker that answered "no embedding model" is asked again only after an hour of workflow time,
   * not once per run (runs are short, so that was one useless embedThread per run for ever).
   */
  embeddingRecheck: 'embedding-recheck',
};
