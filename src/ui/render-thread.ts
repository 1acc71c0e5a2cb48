/// <reference lib="dom" />
/**
 * The thread page's columns: history (every message, excluded ones marked with why and what replaced
 * them) beside the view (what the next model call gets), plus the budget bar. Rendering only:
 * the shapes come from `view-model.ts`.
 */
import { count, disclosure, h, num, type Child } from './dom.js';
import type { BudgetBar } from './budget-model.js';
import type { ExclusionMark, HistoryBlock, ViewBlock } from './view-model.js';
import { messageText, preview, recalledWhy } from './view-model.js';
import type { StoredMessage, ContextResult, Message } from './types.js';

let ids = 0;
/** A fresh element id (message ids may hold characters that make poor ids). */
const freshId = (prefix: string) => `${prefix}-${++ids}`;

/** One message: a meta line (seq, role, id, tokens) and its text. */
function messageView(m: Message & Partial<Pick<StoredMessage, 'seq' | 'tokens'>>): HTMLElement {
  const meta = [
    m.seq !== undefined ? `#${m.seq}` : undefined,
    m.role,
    m.id,
    m.tokens !== undefined ? count(m.tokens, 'token') : undefined,
  ].filter((x) => x !== undefined);
  return h(
    'div',
    { class: `msg role-${m.role}`, 'data-message-id': m.id },
    h('div', { class: 'msg-meta' }, meta.join(' · ')),
    h('p', { class: 'msg-text' }, messageText(m)),
  );
}

/** The heading of a block: what kind of thing it is. */
function blockTitle(kind: string, messages: readonly Message[]): string {
  if (kind === 'tool_call') {
    const names = messages.flatMap((m) => m.parts.filter((p) => p.type === 'tool_call').map((p) => p.name));
    return `Tool call: ${names.join(', ')} (${count(messages.length - 1, 'result')})`;
  }
  return kind === 'message' ? messages[0]!.role : kind;
}

/**
 * Why a block left the view. The first block of a run says it all (strategy, reason, compaction and
 * the summary standing for it); the next ones excluded the same way say so briefly.
 */
function exclusionView(x: ExclusionMark, sameAsPrevious: boolean): HTMLElement {
  // Repeats are counted (`toolResultCollapse ×8`); the recorded text stays a hover away.
  const title = x.recorded;
  if (sameAsPrevious) {
    return h('p', { class: 'exclusion', title }, h('strong', {}, 'Excluded'), ` by ${x.strategy}, as above`);
  }
  const summary = x.replacedBy;
  return h(
    'p',
    { class: 'exclusion', title },
    h('strong', {}, 'Excluded'),
    ` by ${x.strategy} (${x.reason}) in compaction `,
    h('code', {}, x.compactionId),
    summary && [
      h('br'),
      'Replaced by summary ',
      h('code', {}, summary.id),
      summary.live
        ? ''
        : summary.foldedInto
          ? [' (since folded into ', h('code', {}, summary.foldedInto), ')']
          : ' (since dropped from the view)',
      `: “${preview(summary.text, 160)}”`,
    ],
  );
}

/** The history column. */
export function historyColumn(blocks: readonly HistoryBlock[], total: number): HTMLElement {
  const excluded = blocks.filter((b) => b.excluded).reduce((n, b) => n + b.messages.length, 0);
  return h(
    'section',
    { class: 'column', 'aria-labelledby': 'history-title' },
    h('h3', { id: 'history-title' }, `History (${count(total, 'message')}, ${num(excluded)} excluded)`),
    blocks.map((b) => {
      const x = b.excluded;
      return h(
        'article',
        {
          class: `block kind-${b.kind}${x ? ' excluded' : ''}`,
          'data-excluded': x ? 'true' : undefined,
          'aria-label': `${blockTitle(b.kind, b.messages)}${x ? ', excluded' : ''}`,
        },
        h('h4', {}, blockTitle(b.kind, b.messages)),
        x && exclusionView(x, b.sameAsPrevious === true),
        b.messages.map(messageView),
      );
    }),
  );
}

/** The pinned working memory's title: whose, which version, its tokens of its share, cut or whole. */
function workingMemoryTitle(ctx: ContextResult, tokens: number): string {
  const wm = ctx.workingMemory;
  if (!wm) return `Working memory · ${count(tokens, 'token')}`;
  const whose =
    wm.threadId !== undefined
      ? "the thread's"
      : wm.resourceId !== undefined
        ? `${wm.userId ?? ''}'s for ${wm.resourceId}`
        : `${wm.userId ?? ''}'s`;
  const cut = wm.truncated ? ', cut to fit' : '';
  return `Working memory (${whose}, version ${wm.version}, ${wm.format}) · ${count(tokens, 'token')} of ${wm.maxTokens}${cut}`;
}

/** The view column; each summary can be expanded to the history messages it replaced. */
export function viewColumn(blocks: readonly ViewBlock[], ctx: ContextResult, threadId: string): HTMLElement {
  const messages = blocks.reduce((n, b) => n + b.messages.length, 0);
  const dropped = ctx.droppedOnRead ?? 0;
  return h(
    'section',
    { class: 'column', 'aria-labelledby': 'view-title' },
    h('h3', { id: 'view-title' }, `View (${count(messages, 'message')}, ${count(ctx.tokens, 'token')})`),
    // Everything before the memories and recalled blocks stays the same from call to call.
    ctx.cache &&
      h(
        'p',
        { class: 'cache', title: `prefix sha256 ${ctx.cache.prefixHash}` },
        `Stable prefix: ${count(ctx.cache.stableTokens, 'token')} of ${ctx.tokens} (prefix ${ctx.cache.prefixHash.slice(0, 8)}), kept by a provider's prompt cache while it does not change.`,
      ),
    // Compaction has not caught up with the budget: the read itself left the oldest groups out.
    dropped > 0 &&
      h('p', { class: 'exclusion' }, `${count(dropped, 'older group')} left out on read to fit the budget.`),
    blocks.map((b) => {
      const title =
        b.kind === 'summary'
          ? `Summary (${b.strategy}) · ${count(b.tokens, 'token')}`
          : b.kind === 'working_memory'
            ? workingMemoryTitle(ctx, b.tokens)
            : b.kind === 'memories'
              ? `Long-term memories · ${count(b.tokens, 'token')}`
              : b.kind === 'recalled'
                ? `Recalled history · ${count(ctx.recalled?.length ?? 0, 'message')} · ${count(b.tokens, 'token')}`
                : `${blockTitle(b.kind, b.messages)} · ${count(b.tokens, 'token')}`;
      let expand: Child = null;
      if (b.kind === 'recalled') {
        // Why each message is there: the search hit (which ranker, what score) or the hit it came with.
        expand = h(
          'ul',
          { class: 'recalled-why', 'aria-label': `Why recalled (query: ${ctx.recall?.query ?? ''})` },
          (ctx.recalled ?? []).map((r) => h('li', {}, recalledWhy(r, threadId))),
        );
      }
      if (b.kind === 'summary') {
        const replaced = b.replaced ?? [];
        const [toggle, region] = disclosure(
          freshId('replaced'),
          {
            show: `Show the ${count(replaced.length, 'message')} it replaced`,
            hide: `Hide the ${count(replaced.length, 'message')} it replaced`,
          },
          h('div', { class: 'replaced' }, replaced.map(messageView)),
        );
        expand = [toggle, region];
      }
      return h(
        'article',
        { class: `block kind-${b.kind}`, 'aria-label': title },
        h('h4', {}, title),
        b.messages.map(messageView),
        expand,
      );
    }),
  );
}

// Geometry goes through the CSSOM, not `style` attributes, which the page's CSP forbids.
const sized = (el: HTMLElement, percent: number) => ((el.style.width = `${percent.toFixed(2)}%`), el);
const placed = (el: HTMLElement, percent: number) => (
  (el.style.left = `calc(${percent.toFixed(2)}% - 2px)`),
  el
);

/** The budget bar with a legend; the bar itself is decoration, the legend carries the numbers. */
export function budgetView(bar: BudgetBar): HTMLElement {
  const title = `Token budget: ${num(bar.tokens)} of ${count(bar.budget, 'token')} used`;
  return h(
    'section',
    { 'aria-labelledby': 'budget-title' },
    h('h3', { id: 'budget-title' }, title, bar.over > 0 ? ` (${num(bar.over)} over)` : ''),
    h(
      'div',
      { class: 'bar', 'aria-hidden': 'true' },
      bar.segments
        .filter((s) => s.tokens > 0)
        .map((s) =>
          sized(h('span', { class: `seg-${s.key}`, title: `${s.label}: ${num(s.tokens)}` }), s.percent),
        ),
      placed(h('span', { class: 'budget-line' }), bar.budgetPercent),
    ),
    h(
      'ul',
      { class: 'legend' },
      bar.segments.map((s) =>
        h(
          'li',
          { 'data-segment': s.key },
          h('i', { class: `seg-${s.key}` }),
          `${s.label}: ${count(s.tokens, 'token')}`,
        ),
      ),
      h('li', { 'data-segment': 'free' }, h('i', { class: 'seg-free' }), `Free: ${count(bar.free, 'token')}`),
    ),
  );
}
