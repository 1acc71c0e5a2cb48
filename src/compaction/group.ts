/**
 * Message groups: the atomic unit that compaction keeps or excludes as a whole.
 */

/**
 * - `system`: one system message.
 * - `user`: one user message; starts a new turn.
 * - `assistant_text`: an assistant reply without tool calls (reasoning-only messages before it join it).
 * - `tool_call`: an assistant message with tool calls plus every result answering them (by callId),
 *   with the reasoning-only messages that lead to the call or come while its results are awaited
 *   (reasoning after a finished group waits for the next assistant message, reply or call).
 * - `summary`: a message produced by compaction, standing in for the groups it replaced.
 * - `orphan_tool_result`: a tool result whose call is unknown or ambiguous; never sent to a model.
 */
export type GroupKind = 'system' | 'user' | 'assistant_text' | 'tool_call' | 'summary' | 'orphan_tool_result';

/** Why a group is not in the view, and who decided it. */
export interface Exclusion {
  /** Machine-readable reason, e.g. `truncated`, `summarized`, `collapsed`, `orphan_tool_result`. */
  reason: string;
  /** The strategy that excluded it (`index` for facts such as orphans). */
  strategy: string;
  /** The id of the summary group that now stands for it, if any. */
  summaryId?: string;
}

/** One group: ids and counts only, so the index stays small and JSON-safe. */
export interface GroupState {
  /** Stable id: the id of the group's first message (or of the summary message). */
  id: string;
  kind: GroupKind;
  /** Turn index: 0 before the first user message, then 1, 2, … (a user group opens its turn). */
  turn: number;
  /** Member message ids in append order. */
  messageIds: string[];
  tokens: number;
  bytes: number;
  /** Sequence number of the first member, when messages are stored (orders summaries in the view). */
  firstSeq?: number;
  /** Tool calls of this group still waiting for their result. */
  pendingCallIds?: string[];
  /** True while the group holds only reasoning messages (it will join the next assistant message). */
  reasoningOnly?: boolean;
  excluded?: Exclusion;
  /** For summaries: how many history messages it stands for (its provenance is stored in full elsewhere). */
  replacesMessages?: number;
  /**
   * For summaries: true when it is a collapsed tool-call group (toolResultCollapse). Such a line
   * belongs to its turn like the group it replaced; an LLM summary (not collapsed) folds history.
   */
  collapsed?: true;
}

/** True if a group may be sent to a model: included, not an orphan, not waiting for tool results. */
export function isSendable(group: GroupState): boolean {
  return (
    !group.excluded &&
    group.kind !== 'orphan_tool_result' &&
    !group.reasoningOnly &&
    !(group.pendingCallIds && group.pendingCallIds.length > 0)
  );
}
