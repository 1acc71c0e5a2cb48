/**
 * Patch ids of the thread workflow. 0.1.0 is the baseline: the histories recorded by
 * test/support/record-histories.ts (generation `base`) replay against the current code. From 0.1.0
 * on, a change to workflow logic that alters its commands (an activity, timer or continue-as-new
 * added, removed or reordered) goes behind `patched(PATCHES.x)`, so runs that began before it replay
 * on the old path: list its id here and record a new history generation with it. The replay test
 * checks that the recorded histories replay each patch both ways. A patch is removed (after
 * `deprecatePatch`) only once no run from before it can be open.
 */
export const PATCHES = {
  /** Idle close and retention (workflows/idle-close.ts): a timer, a memo, the end of an idle run. */
  idleClose: 'idle-close',
  /**
   * A thread whose close time passed extracts its pending messages at once instead of waiting for
   * `idleMs` (an activity scheduled earlier), then closes.
   */
  extractOnClose: 'extract-on-close',
  /**
   * The default strategy compacts to the view's budget (the budget less `recallShare`), not the whole
   * budget: compaction fires earlier (src/thread/config.ts `viewBudget`).
   */
  compactAtViewBudget: 'compact-at-view-budget',
  /**
   * A new run (a closed thread opened again, an import) takes its last append's time from the store
   * (`StoredThread.lastAppendAt`) instead of 0: the idle timer of pending extraction counts from it.
   */
  lastAppendFromStore: 'last-append-from-store',
} as const satisfies Readonly<Record<string, string>>;
