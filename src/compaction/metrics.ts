/**
 * The figures triggers look at. Maintained incrementally by the index (O(1) per change).
 */

/**
 * Current metrics of an index. "Included" means sent by the view: not excluded, and not
 * waiting for tool results or for the reply its reasoning leads to.
 */
export interface Metrics {
  includedTokens: number;
  includedMessages: number;
  includedGroups: number;
  /** Included user groups (each opens a turn). */
  includedTurns: number;
  includedToolCallGroups: number;
  /** Included groups that are not system groups. */
  includedNonSystemGroups: number;
  totalTokens: number;
  totalMessages: number;
  totalGroups: number;
  totalTurns: number;
  /** Tool-call groups ever formed, collapsed or excluded ones included (pruned ones too, once counted). */
  totalToolCallGroups: number;
}

/** Metrics of an empty index. */
export function emptyMetrics(): Metrics {
  return {
    includedTokens: 0,
    includedMessages: 0,
    includedGroups: 0,
    includedTurns: 0,
    includedToolCallGroups: 0,
    includedNonSystemGroups: 0,
    totalTokens: 0,
    totalMessages: 0,
    totalGroups: 0,
    totalTurns: 0,
    totalToolCallGroups: 0,
  };
}
