/// <reference lib="dom" />
/**
 * The inspector's entry point: asks for the bearer token (kept in sessionStorage, so it dies with the
 * tab), then shows the tenant's threads (`#/`) or one thread (`#/threads/<id>`) from the same HTTP API
 * agents use. A link may carry the token in its fragment, which browsers never send to a server:
 * `/ui#token=<t>` or `/ui#/threads/<id>?token=<t>`; it is taken once and removed from the address bar.
 * A token in the query string (`/ui?token=`) has already travelled to the server (and any proxy's
 * log): it is removed from the address bar but not used, and the page says why.
 */
import { Api, ApiError, type ThreadData } from './api.js';
import { button, count, h, num } from './dom.js';
import { memoriesView, threadRows, workflowText } from './memories-model.js';
import { memoriesSection } from './render-memories.js';
import { budgetView, historyColumn, viewColumn } from './render-thread.js';
import { budgetBar } from './budget-model.js';
import { serviceFacts } from './service-model.js';
import {
  historyBlocks,
  listHash,
  listQuery,
  parseListRoute,
  viewBlocks,
  type ListRoute,
} from './view-model.js';

const TOKEN_KEY = 'durable-memory.token';
const main = document.getElementById('main')!;
const statusLine = document.getElementById('status')!;
const tokenInput = document.getElementById('token') as HTMLInputElement;
const apiBase = document.body.dataset['api'] ?? '/v1';

/** Threads per page of the list (the API pages; `#/?limit=` overrides it). */
const LIST_PAGE = 50;

/** Bumped by every navigation: a load that finishes after the person moved on is not shown. */
let generation = 0;

/** Says something in the live region (announced by screen readers). */
function say(text: string, error = false): void {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', error);
}

function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/**
 * Takes a token from the address's fragment (`#token=<t>`, `#/threads/<id>?token=<t>`), then removes
 * it so it is not kept in history or bookmarks. A `?token=` in the query is removed and refused.
 * @returns a notice for the person, when the address held a token that was not used.
 */
function adoptUrlToken(): string | undefined {
  const url = new URL(location.href);
  let notice: string | undefined;
  if (url.searchParams.has('token')) {
    url.searchParams.delete('token');
    notice =
      'A token in the address query (?token=) is sent to the server and may be logged on the way, ' +
      'so it was not used: enter it above, or link with #token= instead.';
  }
  const fragment = url.hash.slice(1);
  const q = fragment.startsWith('token=') ? -1 : fragment.indexOf('?');
  if (q !== -1 || fragment.startsWith('token=')) {
    const route = q === -1 ? '' : fragment.slice(0, q);
    const params = new URLSearchParams(fragment.slice(q + 1));
    const fromUrl = params.get('token');
    if (fromUrl !== null) {
      if (fromUrl) sessionStorage.setItem(TOKEN_KEY, fromUrl);
      params.delete('token');
      const rest = params.toString();
      url.hash = route + (rest ? `?${rest}` : '');
    }
  }
  if (url.href !== location.href) history.replaceState(null, '', url);
  return notice;
}

function askForToken(message: string, error = false): void {
  main.replaceChildren(h('p', {}, 'Enter an API token above to see your threads.'));
  say(message, error);
  tokenInput.focus();
}

/** Shows an error where the page was; a refused token asks for another one. */
function fail(err: unknown): void {
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
    sessionStorage.removeItem(TOKEN_KEY);
    askForToken(`The API refused the token (${err.code}). Enter another one.`, true);
    return;
  }
  const text = err instanceof ApiError ? `${err.message} (${err.code})` : String(err);
  say(text, true);
}

/** The list's filters: thread id prefix and user, searched by the API; submitting starts at page one. */
function listFilters(route: ListRoute): HTMLElement {
  const search = h('input', { id: 'thread-search', name: 'q', type: 'search', value: route.search });
  const user = h('input', { id: 'thread-user', name: 'user', type: 'search', value: route.user });
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Threads' },
    h('label', { for: 'thread-search' }, 'Thread id starts with'),
    search,
    h('label', { for: 'thread-user' }, 'User'),
    user,
    h('button', { type: 'submit' }, 'Search'),
    (route.search || route.user) &&
      h('a', { href: listHash({ search: '', user: '', limit: route.limit }) }, 'Clear'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = listHash({ search: search.value, user: user.value, limit: route.limit });
  });
  return form;
}

async function showThreads(api: Api, route: ListRoute, gen: number): Promise<void> {
  say('Loading threads…');
  const page = await api.threads(listQuery(route, LIST_PAGE));
  if (gen !== generation) return;
  const rows = threadRows(page.threads);
  const filtered = route.search !== '' || route.user !== '';
  const table = h(
    'table',
    { class: 'threads' },
    h('caption', {}, 'Ordered by thread id'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Thread'),
        h('th', { scope: 'col' }, 'User'),
        h('th', { scope: 'col', class: 'num' }, 'Messages'),
        h('th', { scope: 'col' }, 'Last activity'),
        h(
          'th',
          { scope: 'col', title: 'closed (idle): the next append or command opens it again' },
          'Workflow',
        ),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((r) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/threads/${encodeURIComponent(r.threadId)}` }, r.threadId)),
          h('td', {}, r.user),
          h('td', { class: 'num' }, num(r.messages)),
          h('td', {}, r.updated),
          h('td', { class: 'workflow' }, r.workflow),
        ),
      ),
    ),
  );
  // The API pages by cursor: each page has its own address, so Back returns to the page before.
  const pages = h(
    'nav',
    { class: 'pages', 'aria-label': 'Pages' },
    route.after !== undefined && h('a', { href: listHash({ ...route, after: undefined }) }, '« First page'),
    page.next !== undefined &&
      h('a', { href: listHash({ ...route, after: page.next }), rel: 'next' }, 'Next page »'),
  );
  const empty = filtered
    ? 'No thread matches.'
    : route.after
      ? 'No more threads.'
      : 'This tenant has no threads yet.';
  main.replaceChildren(
    h('h2', {}, 'Threads'),
    listFilters(route),
    rows.length > 0 ? table : h('p', {}, empty),
    pages,
  );
  const more = page.next !== undefined ? ', more on the next page' : '';
  say(`${count(rows.length, 'thread')}${route.after ? ' on this page' : ''}${more}.`);
}

/** An unknown thread: say so where the page was, with the way back to the list. */
function showNotFound(threadId: string): void {
  main.replaceChildren(
    h(
      'section',
      { class: 'not-found', 'aria-labelledby': 'not-found-title' },
      h('h2', { id: 'not-found-title' }, 'Thread not found'),
      h('p', {}, 'There is no thread ', h('code', {}, threadId), ' for this token.'),
      h('p', {}, h('a', { href: '#/' }, '← All threads')),
    ),
  );
  say(`Thread ${threadId} not found.`, true);
}

/**
 * The facts line under a thread's heading: owner, model, counts, pending work, errors, and the
 * provider-stored conversation of a bound thread.
 */
function threadFacts(data: ThreadData): HTMLElement {
  const s = data.state;
  const service = serviceFacts(s.service);
  const excluded = data.history.filter((m) => m.excludedBy !== undefined).length;
  const fact = (label: string, value: string) => h('li', {}, `${label} `, h('b', {}, value));
  return h(
    'ul',
    { class: 'facts' },
    fact('User', s.userId ?? '—'),
    fact('Model', s.config.model),
    fact('History', `${count(data.history.length, 'message')}, ${num(excluded)} excluded`),
    fact('Budget', count(s.config.budget, 'token')),
    fact('Compactions', num(s.compactions)),
    fact('Pending', s.pending.length > 0 ? s.pending.join(', ') : 'nothing'),
    // Closed after idling: everything is stored; the next append or command opens it again.
    s.open !== undefined && h('li', { class: 'workflow' }, 'Workflow ', h('b', {}, workflowText(s.open))),
    s.forkedFrom &&
      h(
        'li',
        { class: 'forked-from' },
        'Forked from ',
        h('a', { href: `#/threads/${encodeURIComponent(s.forkedFrom.threadId)}` }, s.forkedFrom.threadId),
        ' at ',
        h('code', {}, s.forkedFrom.messageId),
        ` (#${s.forkedFrom.seq})`,
      ),
    s.llm !== undefined && fact('Summarizer', s.llm),
    s.lastError !== undefined && fact('Last error', s.lastError),
    service &&
      h(
        'li',
        { class: 'service' },
        'Provider conversation ',
        h('b', {}, service.kind),
        service.responseId !== undefined && [', latest response ', h('code', {}, service.responseId)],
        ` (${service.status})`,
      ),
    // Failed and being retried by Temporal: not an error yet, but why the work is late.
    ...(s.retrying ?? []).map((r) =>
      fact(
        `Retrying ${r.lane}`,
        `attempt ${r.attempt}${r.maximumAttempts ? ` of ${r.maximumAttempts}` : ''}` +
          `${r.nextAttemptAt ? `, next at ${new Date(r.nextAttemptAt).toLocaleTimeString()}` : ', running'}: ${r.lastError}`,
      ),
    ),
  );
}

/**
 * Forking: a new thread id and, optionally, the last message it shares (default: the latest). Success
 * opens the fork; a refusal (the id is taken, no such message) is said in the status line.
 */
function forkForm(api: Api, threadId: string): HTMLElement {
  const newId = h('input', { id: 'fork-id', name: 'id', required: true, autocomplete: 'off' });
  const at = h('input', { id: 'fork-at', name: 'at', placeholder: 'the latest', autocomplete: 'off' });
  const submit = h('button', { type: 'submit' }, 'Fork');
  const form = h(
    'form',
    { class: 'fork', 'aria-label': 'Fork this thread' },
    h('label', { for: 'fork-id' }, 'Fork into thread'),
    newId,
    h('label', { for: 'fork-at' }, 'at message'),
    at,
    submit,
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    say('Forking…');
    const target = newId.value.trim();
    api.fork(threadId, target, at.value.trim() || undefined).then(
      (forked) => {
        say(`Forked ${threadId} at ${forked.forkedFrom.messageId} into ${forked.threadId}.`);
        location.hash = `#/threads/${encodeURIComponent(forked.threadId)}`;
      },
      (err: unknown) => {
        submit.disabled = false;
        fail(err);
      },
    );
  });
  return form;
}

function renderThread(api: Api, threadId: string, data: ThreadData): void {
  const view = viewBlocks(data.context, data.history, data.exported);
  const compactButton = button('Compact now', () => void compactNow(api, threadId, compactButton), {
    class: 'primary',
    id: 'compact-now',
  });
  main.replaceChildren(
    h('p', {}, h('a', { href: '#/' }, '← All threads')),
    h('h2', {}, `Thread ${threadId}`),
    threadFacts(data),
    h(
      'div',
      { class: 'actions' },
      compactButton,
      button('Refresh', () => void route()),
    ),
    forkForm(api, threadId),
    budgetView(budgetBar(data.context)),
    h(
      'div',
      { class: 'columns' },
      historyColumn(historyBlocks(data.history, data.exported), data.history.length),
      viewColumn(view, data.context, threadId),
    ),
    memoriesSection(
      data.state.userId,
      memoriesView(
        data.memories,
        (data.context.memories ?? []).map((m) => m.id),
      ),
    ),
  );
}

async function openThread(api: Api, threadId: string, gen: number): Promise<void> {
  say(`Loading thread ${threadId}…`);
  let data: ThreadData;
  try {
    data = await api.thread(threadId);
  } catch (err) {
    if (gen !== generation || !(err instanceof ApiError && err.code === 'unknown_thread')) throw err;
    return showNotFound(threadId);
  }
  if (gen !== generation) return;
  renderThread(api, threadId, data);
  say(
    `Thread ${threadId}: ${count(data.history.length, 'message')}, ${count(data.context.tokens, 'token')} in view.`,
  );
}

async function compactNow(api: Api, threadId: string, trigger: HTMLButtonElement): Promise<void> {
  trigger.disabled = true;
  say('Compacting…');
  const gen = generation;
  try {
    const result = await api.compact(threadId);
    const data = await api.thread(threadId);
    if (gen !== generation) return; // the person went elsewhere meanwhile
    renderThread(api, threadId, data);
    document.getElementById('compact-now')?.focus(); // the old button is gone: keep keyboard focus
    say(
      result === null
        ? 'Compaction failed; the thread state says why.'
        : result.excludedGroups === 0 && result.summaries === 0
          ? 'Compacted: nothing to do, the view already fits.'
          : `Compacted (${result.strategy}): ${count(result.excludedGroups, 'group')} excluded, ` +
            `${count(result.summaries, 'summary', 'summaries')} written, ` +
            `${num(result.includedTokensBefore)} → ${count(result.includedTokensAfter, 'token')} in view.`,
    );
  } catch (err) {
    trigger.disabled = false;
    fail(err);
  }
}

/** Shows the page the address asks for. */
async function route(): Promise<void> {
  // Without a token, try anyway: a local API with no token created yet serves this machine openly.
  const api = new Api(token(), apiBase);
  const match = /^#\/threads\/(.+)$/u.exec(location.hash);
  const gen = ++generation;
  try {
    await (match
      ? openThread(api, decodeURIComponent(match[1]!), gen)
      : showThreads(api, parseListRoute(location.hash) ?? { search: '', user: '' }, gen));
    if (gen !== generation) return;
    if (token() === null) say(`${statusLine.textContent} No token needed: this local API has none yet.`);
  } catch (err) {
    if (gen !== generation) return;
    if (token() === null && err instanceof ApiError && err.status === 401) {
      return askForToken('Enter an API token to start.');
    }
    fail(err);
  }
}

document.getElementById('token-form')!.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const value = tokenInput.value.trim();
  tokenInput.value = '';
  if (!value) return askForToken('The token is empty.', true);
  sessionStorage.setItem(TOKEN_KEY, value);
  void route();
});
document.getElementById('forget-token')!.addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  askForToken('Token forgotten.');
});
/** Adopts a token the address carries (on load, and when only the fragment changed), then shows the page. */
function navigate(): void {
  const urlNotice = adoptUrlToken();
  if (urlNotice) askForToken(urlNotice, true);
  else void route();
}
// Editing `#token=` in an open tab changes only the fragment: no reload, just this event.
window.addEventListener('hashchange', navigate);
navigate();
