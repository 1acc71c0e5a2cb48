/// <reference lib="dom" />
/**
 * The user's long-term memories: each live fact with its provenance, whether the current view
 * injected it, and the versions it superseded (kept, never deleted, with when and why).
 */
import { h } from './dom.js';
import type { MemoriesView } from './memories-model.js';
import type { MemoryRecord } from './types.js';

const when = (iso: string | undefined) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/u, ' UTC') : '');

function previousItem(m: MemoryRecord): HTMLElement {
  return h(
    'li',
    { 'data-memory-id': m.id },
    h('del', {}, m.text),
    ` — superseded ${when(m.supersededAt)}`,
    m.supersededReason ? `: ${m.supersededReason}` : '',
  );
}

/** The memories section of the thread page. */
export function memoriesSection(userId: string | undefined, view: MemoriesView): HTMLElement {
  const title = userId ? `Long-term memories of ${userId}` : 'Long-term memories';
  const section = h(
    'section',
    { 'aria-labelledby': 'memories-title' },
    h('h3', { id: 'memories-title' }, title),
  );
  if (!userId) {
    section.append(h('p', {}, 'This thread has no user, so it has no long-term memories.'));
    return section;
  }
  if (view.rows.length === 0 && view.forgotten.length === 0 && view.orphans.length === 0) {
    section.append(h('p', {}, 'No memories extracted yet.'));
    return section;
  }
  for (const row of view.rows) {
    const m = row.memory;
    section.append(
      h(
        'article',
        { class: 'memory', 'data-memory-id': m.id, 'aria-label': m.text },
        h(
          'div',
          {},
          h('strong', {}, m.text),
          m.category && h('span', { class: 'badge' }, m.category),
          row.used && h('span', { class: 'badge' }, 'in the view'),
          row.expires && h('span', { class: 'badge expires' }, `expires ${row.expires}`),
        ),
        h(
          'div',
          { class: 'provenance' },
          `Learned ${when(m.createdAt)} ${row.provenance} · memory id ${m.id}`,
        ),
        row.previous.length > 0 &&
          h(
            'div',
            { class: 'previous' },
            `Earlier version${row.previous.length === 1 ? '' : 's'}:`,
            h('ul', {}, row.previous.map(previousItem)),
          ),
      ),
    );
  }
  if (view.forgotten.length > 0) {
    section.append(
      h('h4', {}, 'Forgotten memories (superseded without a replacement)'),
      h('ul', { class: 'previous' }, view.forgotten.map(previousItem)),
    );
  }
  if (view.orphans.length > 0) {
    section.append(
      h('h4', {}, 'Superseded memories whose replacement was deleted'),
      h('ul', { class: 'previous' }, view.orphans.map(previousItem)),
    );
  }
  return section;
}
