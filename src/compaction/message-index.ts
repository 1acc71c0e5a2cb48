/**
 * The incremental group index. It turns a stream of body-free message descriptions into
 * atomic groups, keeps per-group counts and the metrics triggers read, and records which groups are
 * excluded and why. Appending k messages costs O(k): each message looks only at the last group and,
 * for a tool result, at the group waiting for it (found through two maps kept up to date on every
 * change, never rebuilt on the append path). The whole state is JSON-safe, so a workflow can carry it across
 * continue-as-new. Pure: no I/O, no clock, no randomness.
 */
import type { MessageMeta } from './message-meta.js';
import { isSendable, type Exclusion, type GroupKind, type GroupState } from './group.js';
import { emptyMetrics, type Metrics } from './metrics.js';
import type { ViewChange } from './view-change.js';

/** The serialisable state of a {@link MessageIndex}. */
export interface IndexState {
  version: 1;
  groups: GroupState[];
  /** Turn counter: the turn of the newest user group. */
  turn: number;
  /** Pending tool calls: callId → owning group id (`''` when two groups issued the same id). */
  calls: Record<string, string>;
  metrics: Metrics;
  /** Highest sequence number applied; metas at or below it are ignored (idempotent re-delivery). */
  lastSeq: number;
  /** Excluded groups dropped by {@link MessageIndex.prune}: they stay in history, not in memory. */
  prunedGroups: number;
}

/** The group index. Create empty, or restore with {@link MessageIndex.fromJSON}. */
export class MessageIndex {
  private state: IndexState;
  /** Group id → position, rebuilt lazily after inserts and prunes. */
  private positions: Map<string, number> | undefined;
  /**
   * Summaries inserted but not yet spliced into `groups`: splicing one at a time would make a
   * strategy that collapses k groups O(k·n); they are merged in one pass when someone reads.
   */
  private pending: { at: number; group: GroupState }[] = [];
  private pendingById = new Map<string, GroupState>();
  /**
   * Groups still waiting for tool results, by group id. A tool result finds its group here in O(1);
   * looking it up by position would rebuild a map of every group after each restore, summary insert
   * or prune, making the next append O(history).
   */
  private waiting = new Map<string, GroupState>();
  /**
   * Work done since construction: messages appended plus every group and pending call id any
   * operation visited (full passes such as restore, flush and prune count each group). Tests read
   * its growth to prove that an append costs O(k), whatever the index size.
   */
  examined = 0;

  constructor(state?: IndexState) {
    this.state = state ?? {
      version: 1,
      groups: [],
      turn: 0,
      calls: {},
      metrics: emptyMetrics(),
      lastSeq: 0,
      prunedGroups: 0,
    };
    // Restoring is O(n) anyway (the state was just copied); appends after it must not be.
    const m = this.state.metrics;
    let toolCallGroups = 0;
    // The included figures are derived again from the groups, so a state saved by a version that
    // counted groups the view does not send (a call waiting for results) is read right.
    Object.assign(m, {
      includedTokens: 0,
      includedMessages: 0,
      includedGroups: 0,
      includedTurns: 0,
      includedToolCallGroups: 0,
      includedNonSystemGroups: 0,
    });
    for (const g of this.state.groups) {
      if (g.pendingCallIds?.length) this.waiting.set(g.id, g);
      if (g.kind === 'tool_call') toolCallGroups++;
      this.count(g, +1);
    }
    // States saved before this metric existed: count what is still indexed (pruned groups are gone).
    m.totalToolCallGroups ??= toolCallGroups;
    this.examined += this.state.groups.length;
  }

  /** Restores an index from {@link toJSON} output. */
  static fromJSON(state: IndexState): MessageIndex {
    if (!state || state.version !== 1 || !Array.isArray(state.groups)) {
      throw new Error('MessageIndex.fromJSON: not an index state of version 1');
    }
    return new MessageIndex(JSON.parse(JSON.stringify(state)) as IndexState);
  }

  /** Builds an index from metas in order. */
  static from(metas: Iterable<MessageMeta>): MessageIndex {
    const index = new MessageIndex();
    for (const meta of metas) index.append(meta);
    return index;
  }

  /**
   * The index of a stored view, which a new run of a compacted thread (imported, or restarted after
   * its workflow ended) starts from: summaries and included messages in view order, as the
   * compaction activity groups them. The history outside the view is counted in the totals, as
   * pruned groups would be, but not grouped again; `lastSeq` is the history's.
   *
   * @param entries - the view in order; a message's `seq` is its history seq, a summary's its
   *   position seq (the first seq of what it stands for), which a later ViewChange removes it by
   * @param history - figures of the whole history the view was read up to
   */
  static fromView(
    entries: Iterable<{ meta: MessageMeta; seq?: number }>,
    history: { lastSeq: number; messages: number; tokens: number; turns: number },
  ): MessageIndex {
    const index = new MessageIndex();
    const inView = { messages: 0, tokens: 0, turns: 0 };
    for (const { meta, seq } of entries) {
      const isSummary = meta.shape === 'summary';
      index.append(isSummary || seq === undefined ? { ...meta, seq: undefined } : { ...meta, seq });
      if (isSummary) {
        // Its position seq places it, as a compaction's ViewChange does: not a seq of the history.
        if (seq !== undefined) index.state.groups[index.state.groups.length - 1]!.firstSeq = seq;
        continue;
      }
      inView.messages++;
      inView.tokens += meta.tokens;
      if (meta.shape === 'user') inView.turns++;
    }
    const s = index.state;
    s.metrics.totalMessages += Math.max(0, history.messages - inView.messages);
    s.metrics.totalTokens += Math.max(0, history.tokens - inView.tokens);
    s.metrics.totalTurns += Math.max(0, history.turns - inView.turns);
    s.lastSeq = Math.max(s.lastSeq, history.lastSeq);
    return index;
  }

  /** A JSON-safe copy of the state. */
  toJSON(): IndexState {
    this.flush();
    return JSON.parse(JSON.stringify(this.state)) as IndexState;
  }

  /** Groups in view order (read-only: change them through the index's methods). */
  get groups(): readonly GroupState[] {
    this.flush();
    return this.state.groups;
  }

  /** Current metrics (a copy). */
  get metrics(): Metrics {
    return { ...this.state.metrics };
  }

  /** Highest sequence number applied. */
  get lastSeq(): number {
    return this.state.lastSeq;
  }

  /** The group with this id, if present. */
  group(id: string): GroupState | undefined {
    const pending = this.pendingById.get(id);
    if (pending) return pending;
    const at = this.positionOf(id);
    return at === undefined ? undefined : this.state.groups[at];
  }

  /** Position of a group in view order. */
  positionOf(id: string): number | undefined {
    if (this.pendingById.has(id)) this.flush();
    if (!this.positions) {
      this.examined += this.state.groups.length;
      this.positions = new Map(this.state.groups.map((g, i) => [g.id, i]));
    }
    return this.positions.get(id);
  }

  /**
   * Adds one message. Returns false (and changes nothing) when the meta carries a sequence number
   * that was already applied, so a re-delivered announcement is harmless.
   */
  append(meta: MessageMeta): boolean {
    const s = this.state;
    if (meta.seq !== undefined) {
      if (meta.seq <= s.lastSeq) return false;
      s.lastSeq = meta.seq;
    }
    this.examined++; // the message itself
    s.metrics.totalMessages++;
    s.metrics.totalTokens += meta.tokens;
    const last = s.groups[s.groups.length - 1];
    if (last) this.examined++; // the open group it may join
    switch (meta.shape) {
      case 'system':
      case 'summary':
        this.open(meta.shape, meta);
        return true;
      case 'user':
        s.turn++;
        s.metrics.totalTurns++;
        this.open('user', meta);
        return true;
      case 'assistant_text':
        if (last?.reasoningOnly) this.change(last, () => this.join(last, meta, 'answers'));
        else this.open('assistant_text', meta);
        return true;
      case 'reasoning':
        // Reasoning belongs to the assistant message it leads to (a reply or the next call), so it
        // waits for it; only while a call still waits for results is it part of that exchange.
        if (last && (last.reasoningOnly || (last.kind === 'tool_call' && last.pendingCallIds?.length)))
          this.change(last, () => this.join(last, meta));
        else this.open('assistant_text', meta, { reasoningOnly: true });
        return true;
      case 'tool_call':
        return this.appendToolCall(meta, last);
      case 'tool_result':
        return this.appendToolResult(meta);
    }
  }

  private appendToolCall(meta: MessageMeta, last: GroupState | undefined): boolean {
    // A reasoning-only group becomes the call's group: the reasoning led to this call.
    const led = last?.reasoningOnly ? last : undefined;
    const group = led ?? this.open('tool_call', meta);
    // Counted again only when the last result arrives (see count()).
    this.change(group, () => {
      if (led) {
        this.join(led, meta, 'answers');
        led.kind = 'tool_call';
        this.state.metrics.totalToolCallGroups++;
      }
      const pending: string[] = [];
      for (const callId of meta.callIds ?? []) {
        this.examined++;
        const owner = this.state.calls[callId];
        // The same call id issued twice leaves both calls unmatched: no result may guess its call.
        this.state.calls[callId] = owner === undefined ? group.id : '';
        pending.push(callId);
      }
      if (pending.length > 0) {
        group.pendingCallIds = pending;
        this.waiting.set(group.id, group);
      }
    });
    return true;
  }

  private appendToolResult(meta: MessageMeta): boolean {
    const callIds = meta.callIds ?? [];
    const owners = new Set(callIds.map((c) => this.state.calls[c]));
    const ownerId = owners.size === 1 ? [...owners][0] : undefined;
    const owner = ownerId ? this.waiting.get(ownerId) : undefined;
    this.examined += callIds.length + (owner ? 1 + owner.pendingCallIds!.length : 0);
    if (owner && callIds.length > 0 && callIds.every((c) => owner.pendingCallIds?.includes(c))) {
      this.change(owner, () => {
        owner.pendingCallIds = owner.pendingCallIds!.filter((c) => !callIds.includes(c));
        if (owner.pendingCallIds.length === 0) {
          delete owner.pendingCallIds;
          this.waiting.delete(owner.id);
        }
        this.join(owner, meta);
      });
      for (const c of callIds) delete this.state.calls[c];
      return true;
    }
    const orphan = this.open('orphan_tool_result', meta);
    this.exclude(orphan, { reason: 'orphan_tool_result', strategy: 'index' });
    return true;
  }

  /** Starts a new group holding one message (`unsent` marks it not sendable yet). */
  private open(
    kind: GroupKind,
    meta: MessageMeta,
    unsent: Pick<GroupState, 'pendingCallIds' | 'reasoningOnly'> = {},
  ): GroupState {
    const s = this.state;
    const group: GroupState = {
      id: meta.id,
      kind,
      turn: s.turn,
      messageIds: [meta.id],
      tokens: meta.tokens,
      bytes: meta.bytes,
      ...unsent,
    };
    if (meta.seq !== undefined) group.firstSeq = meta.seq;
    if (kind === 'summary' && meta.collapsed) group.collapsed = true;
    s.groups.push(group);
    this.positions?.set(group.id, s.groups.length - 1);
    s.metrics.totalGroups++;
    if (kind === 'tool_call') s.metrics.totalToolCallGroups++;
    this.count(group, +1);
    return group;
  }

  /**
   * Adds a message to an existing group; call it inside {@link change}. A message `answers` a
   * reasoning-only group (the reply or call the reasoning led to), which can then be sent.
   */
  private join(group: GroupState, meta: MessageMeta, answers?: 'answers'): void {
    group.messageIds.push(meta.id);
    group.tokens += meta.tokens;
    group.bytes += meta.bytes;
    if (answers) delete group.reasoningOnly;
  }

  /**
   * Changes a group in place, keeping the included metrics true: the group is taken out of them
   * before and put back after (each O(1)), so whether it counts follows what the change did.
   */
  private change(group: GroupState, mutate: () => void): void {
    this.count(group, -1);
    mutate();
    this.count(group, +1);
  }

  /**
   * Adds (+1) or removes (-1) a whole group from the included metrics. Only groups the view sends
   * count: not an excluded one, nor one still waiting for tool results or for the reply its
   * reasoning leads to (triggers, budgets and warnings then measure what a model would read).
   */
  private count(group: GroupState, sign: 1 | -1): void {
    if (!isSendable(group)) return;
    const m = this.state.metrics;
    m.includedTokens += sign * group.tokens;
    m.includedMessages += sign * group.messageIds.length;
    m.includedGroups += sign;
    this.countKind(group.kind, sign);
  }

  private countKind(kind: GroupKind, sign: number): void {
    const m = this.state.metrics;
    if (kind !== 'system') m.includedNonSystemGroups += sign;
    if (kind === 'user') m.includedTurns += sign;
    if (kind === 'tool_call') m.includedToolCallGroups += sign;
  }

  /** Excludes a group from the view (no-op if it already is). */
  exclude(group: GroupState, exclusion: Exclusion): void {
    if (group.excluded) return;
    this.count(group, -1);
    group.excluded = { ...exclusion };
  }

  /** Puts an excluded group back into the view (undo). */
  include(group: GroupState): void {
    if (!group.excluded || group.kind === 'orphan_tool_result') return;
    delete group.excluded;
    this.count(group, +1);
  }

  /**
   * Inserts a summary group in place of `replaced` (which are excluded, pointing at the summary).
   * The summary sits where the first replaced group was, so the view keeps its order.
   */
  insertSummary(meta: MessageMeta, replaced: readonly GroupState[], exclusion: Omit<Exclusion, 'summaryId'>) {
    const s = this.state;
    const at = Math.min(...replaced.map((g) => this.positionOf(g.id) ?? s.groups.length));
    const first = s.groups[at];
    const summary: GroupState = {
      id: meta.id,
      kind: 'summary',
      turn: first?.turn ?? s.turn,
      messageIds: [meta.id],
      tokens: meta.tokens,
      bytes: meta.bytes,
      replacesMessages: replaced.reduce((n, g) => n + (g.replacesMessages ?? g.messageIds.length), 0),
    };
    if (meta.collapsed) summary.collapsed = true;
    if (first?.firstSeq !== undefined) summary.firstSeq = first.firstSeq;
    for (const g of replaced) this.exclude(g, { ...exclusion, summaryId: meta.id });
    this.pending.push({ at, group: summary });
    this.pendingById.set(summary.id, summary);
    s.metrics.totalGroups++;
    s.metrics.totalMessages++;
    s.metrics.totalTokens += meta.tokens;
    this.count(summary, +1);
    return summary;
  }

  /**
   * Applies a compaction told as a {@link ViewChange} (the workflow's way: it never sees the steps).
   * Groups whose first seq lies in a removed range leave the index; each inserted summary enters it
   * at its seq, before the first group that starts later. O(n log r + k).
   */
  applyViewChange(change: ViewChange, exclusion: Omit<Exclusion, 'summaryId'>): void {
    const { removed, inserted } = change;
    const isRemoved = (seq: number): boolean => {
      let lo = 0;
      let hi = removed.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const [from, to] = removed[mid]!;
        if (seq < from) hi = mid - 1;
        else if (seq > to) lo = mid + 1;
        else return true;
      }
      return false;
    };
    for (const g of this.groups)
      if (g.firstSeq !== undefined && isRemoved(g.firstSeq)) this.exclude(g, exclusion);
    this.prune();
    if (inserted.length === 0) return;
    const s = this.state;
    const out: GroupState[] = [];
    let next = 0;
    const insert = () => {
      const { meta, seq } = inserted[next++]!;
      // A summary belongs to the turn before it (a collapsed call's turn; 0 at the start).
      const summary: GroupState = {
        id: meta.id,
        kind: 'summary',
        turn: out.at(-1)?.turn ?? 0,
        messageIds: [meta.id],
        tokens: meta.tokens,
        bytes: meta.bytes,
        firstSeq: seq,
      };
      if (meta.collapsed) summary.collapsed = true;
      s.metrics.totalGroups++;
      s.metrics.totalMessages++;
      s.metrics.totalTokens += meta.tokens;
      this.count(summary, +1);
      out.push(summary);
    };
    this.examined += s.groups.length + inserted.length;
    for (const g of s.groups) {
      while (next < inserted.length && g.firstSeq !== undefined && g.firstSeq > inserted[next]!.seq) insert();
      out.push(g);
    }
    while (next < inserted.length) insert();
    s.groups = out;
    this.positions = undefined;
  }

  /** Splices pending summaries into `groups`, each before the group it was anchored at. O(n + k). */
  private flush(): void {
    if (this.pending.length === 0) return;
    const before = new Map<number, GroupState[]>();
    for (const p of this.pending) {
      const list = before.get(p.at);
      if (list) list.push(p.group);
      else before.set(p.at, [p.group]);
    }
    const out: GroupState[] = [];
    this.examined += this.state.groups.length;
    this.state.groups.forEach((g, i) => {
      const inserted = before.get(i);
      if (inserted) out.push(...inserted);
      out.push(g);
    });
    this.state.groups = out;
    this.pending = [];
    this.pendingById.clear();
    this.positions = undefined;
  }

  /**
   * Drops excluded groups from memory (their steps are recorded elsewhere), keeping the index
   * bounded by what is in the view. Pending calls owned by dropped groups are forgotten, so a late
   * result for them becomes an orphan, which is excluded anyway.
   */
  prune(): number {
    this.flush();
    const s = this.state;
    this.examined += s.groups.length;
    const kept = s.groups.filter((g) => !g.excluded);
    const dropped = s.groups.length - kept.length;
    if (dropped === 0) return 0;
    const keptIds = new Set(kept.map((g) => g.id));
    for (const [callId, owner] of Object.entries(s.calls)) {
      if (owner !== '' && !keptIds.has(owner)) delete s.calls[callId];
    }
    for (const id of this.waiting.keys()) if (!keptIds.has(id)) this.waiting.delete(id);
    s.groups = kept;
    s.prunedGroups += dropped;
    this.positions = undefined;
    return dropped;
  }
}
