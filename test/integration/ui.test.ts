/**
 * The thread inspector in a real browser (Debian's Chromium driven by playwright-core) against the
 * real HTTP API (tenant token and all) and the real pipeline: a thread whose compaction excluded
 * messages and inserted summaries, and a user whose memories were superseded. The page must show the
 * excluded messages marked, expand a summary to what it replaced, and change its view when "Compact
 * now" is pressed. Screenshots land in test-output/ for a person to look at.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { registerInspector } from '../../src/ui/route.js';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { REPO_ROOT } from '../support/processes.js';
import { createApiServer } from '../../src/server/api-server.js';
import { TokenStore } from '../../src/tenancy/token-store.js';

const OUTPUT = path.join(REPO_ROOT, 'test-output');
const THREAD = 'trip-planner';

let p: TestPipeline;
let tokens: TokenStore;
let app: FastifyInstance;
let browser: TestBrowser;
let base: string;
/** A bearer token of tenant `acme`, created as `npm run token -- create` would. */
let token: string;

/** A JSON request to the API with the test's token. */
async function api<T>(method: string, url: string, body?: unknown): Promise<T> {
  const res = await fetch(base + url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as T;
  assert.ok(res.ok, `${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Summarization in chunks: each run folds the summary and ~250 tokens into ≤60 tokens. */
const CHUNKED = {
  type: 'summarization',
  trigger: { type: 'tokensExceed', value: 150 },
  target: { type: 'tokensBelow', value: 100 },
  maxInputTokens: 250,
  maxSummaryTokens: 60,
  minimumPreserved: 2,
};

interface State {
  metrics: { includedTokens: number };
  compactions: number;
  pending: string[];
  indexedSeq: number;
  extraction: { extractedSeq: number };
}

/** Polls the thread's state until `ok` holds. */
async function waitFor(what: string, ok: (s: State) => boolean, timeoutMs = 60_000): Promise<State> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await api<State>('GET', `/v1/threads/${THREAD}`);
    if (ok(s)) return s;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A trip-planning conversation with tool calls, long enough to be compacted twice over. */
function conversation() {
  const cities = ['Oslo', 'Bergen', 'Tromsø', 'Stavanger', 'Ålesund', 'Flåm', 'Lofoten', 'Trondheim'];
  const turns = cities.flatMap((city, i) => [
    { id: `u${i}`, role: 'user', content: `What is the weather like in ${city} in June? Plan day ${i + 1}.` },
    {
      id: `a${i}-call`,
      role: 'assistant',
      parts: [{ type: 'tool_call', callId: `c${i}`, name: 'get_weather', arguments: { city, month: 6 } }],
    },
    {
      id: `t${i}`,
      role: 'tool',
      parts: [
        {
          type: 'tool_result',
          callId: `c${i}`,
          name: 'get_weather',
          result: JSON.stringify({
            city,
            highC: 14 + i,
            lowC: 7 + (i % 3),
            rainDays: 9 - i,
            daylightHours: 19 + (i % 4),
          }),
        },
      ],
    },
    {
      id: `a${i}`,
      role: 'assistant',
      content: `Day ${i + 1} in ${city}: about ${14 + i}°C with long daylight; pack a rain jacket and walk the harbour.`,
    },
  ]);
  return [
    { id: 'sys', role: 'system', content: 'You are a concise travel planner for Norway.' },
    {
      id: 'intro',
      role: 'user',
      content: 'Hi! My name is Ada and I live in Oslo. I am allergic to peanuts.',
    },
    ...turns.slice(0, 16),
    { id: 'moved', role: 'user', content: 'Big news: I moved to Bergen last week.' },
    ...turns.slice(16),
  ];
}

before(async () => {
  p = await startPipeline();
  tokens = await TokenStore.connect(p.stack.databaseUrl);
  token = (await tokens.create('acme', 'inspector test')).token;
  // The real API server with the inspector registered on it, as the server's entry point should.
  app = createApiServer({ memory: p.memory, tokens, logger: false });
  registerInspector(app);
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchBrowser();
  await mkdir(OUTPUT, { recursive: true });

  // Built through the HTTP API, as an agent would: small budget (the default strategy collapses
  // tool results, summarizes and truncates), memories extracted after every user turn.
  const messages = conversation();
  await api('POST', `/v1/threads/${THREAD}/messages`, { userId: 'ada', messages: messages.slice(0, 2) });
  // A quarter of the small budget for recall, so the view keeps its summary beside the recalled turns.
  await api('PATCH', `/v1/threads/${THREAD}`, { budget: 700, extractEveryTurns: 1, recallShare: 0.25 });
  for (const m of messages.slice(2)) await api('POST', `/v1/threads/${THREAD}/messages`, { messages: [m] });
  // Compaction has run and no more is due; memories are extracted past the move (seq 19); the
  // last turns' extraction waits for the next user turn, which does not matter here.
  let s = await waitFor('compactions and the extraction of the move', (x) => {
    const compacted = x.compactions > 0 && !x.pending.includes('compaction');
    return x.indexedSeq === messages.length && compacted && x.extraction.extractedSeq >= 19;
  });
  // Then a strategy that summarizes a bounded chunk per run (at most 250 tokens of input, the
  // earlier summary included) down to a low target: configuring runs it once; it is still above
  // its trigger afterwards, and with no new message only "Compact now" runs it again.
  // A working memory of ada's, pinned after the system prompt.
  await api('PUT', '/v1/users/ada/working-memory', { content: '# Ada\n- prefers trains', version: 0 });
  const compactions = s.compactions;
  await api('PATCH', `/v1/threads/${THREAD}`, { strategy: CHUNKED });
  s = await waitFor('the compaction after configuring', (x) => x.compactions > compactions);
  assert.ok(
    s.metrics.includedTokens > CHUNKED.trigger.value,
    'still over the trigger: work left for the button',
  );
});

after(async () => {
  await browser?.close();
  await app?.close();
  await tokens?.close();
  await p?.stop();
});

const excludedCount = (page: Page) => page.locator('article[data-excluded] .msg').count();

test('the inspector shows exclusions, expands summaries, and compacts on request', async () => {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => msg.type() === 'error' && errors.push(msg.text()));
  page.on('response', (res) => res.status() >= 400 && errors.push(`${res.status()} ${res.url()}`));

  // Without a token the page asks for one; with one, the threads are listed with their counts.
  await page.goto(`${base}/ui`);
  await page.getByText('Enter an API token to start.').waitFor();
  await page.getByLabel('API token').fill('dm_not-a-token');
  await page.getByRole('button', { name: 'Use token' }).click();
  await page.getByText('The API refused the token (invalid_token). Enter another one.').waitFor();
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Use token' }).click();
  const row = page.getByRole('row', { name: new RegExp(THREAD) });
  await row.waitFor();
  assert.equal(errors.filter((e) => !/\b401\b/u.test(e)).length, 0, errors.join('\n'));
  errors.length = 0; // the tokenless probe and the wrong token were refused, as they should be
  await page.screenshot({ path: path.join(OUTPUT, 'inspector-threads.png') });
  assert.match(await row.innerText(), new RegExp(`ada\\s+${conversation().length}\\b`, 'u'));

  await row.getByRole('link', { name: THREAD }).click();
  await page.getByRole('heading', { name: `Thread ${THREAD}` }).waitFor();

  // Excluded history is marked with the strategy, the reason and the summary that replaced it.
  const before = await excludedCount(page);
  assert.ok(before > 0, 'some history is excluded');
  const mark = page.locator('article[data-excluded] .exclusion').first();
  assert.match(await mark.innerText(), /^Excluded by \w+ \(.+\) in compaction \S+/u);
  assert.ok(
    (await page.locator('.exclusion', { hasText: 'Replaced by' }).count()) > 0,
    'a summary stands for some',
  );
  // Tool calls and their results are one block.
  const toolBlock = page.locator('article.kind-tool_call').first();
  assert.equal(await toolBlock.locator('.msg').count(), 2);

  // A summary in the view expands to the history messages it replaced.
  const first = page.getByRole('button', { name: /^Show the \d+ messages? it replaced$/u }).first();
  const controls = await first.getAttribute('aria-controls'); // the name changes once pressed
  const expand = page.locator(`button[aria-controls="${controls}"]`);
  const region = page.locator(`#${controls}`);
  assert.equal(await region.isVisible(), false);
  await expand.click();
  assert.equal(await expand.getAttribute('aria-expanded'), 'true');
  assert.ok((await region.locator('.msg').count()) > 0, 'the replaced messages are listed');

  // Budget bar segments and memories with provenance and superseded versions.
  await page.locator('[data-segment="summaries"]').waitFor();
  const memories = page.locator('section[aria-labelledby="memories-title"]');
  assert.match(await memories.innerText(), /User lives in Bergen/u);
  assert.match(await memories.innerText(), /User lives in Oslo — superseded/u);
  assert.match(await memories.innerText(), /from message moved of thread trip-planner by extraction/u);
  // The pinned working memory: whose, which version, its tokens of its share.
  const pinned = page.locator('article.kind-working_memory');
  assert.match(
    (await pinned.locator('h4').textContent()) ?? '',
    /^Working memory \(ada's, version 1, markdown\) · \d+ tokens of 70$/u,
  );
  assert.match(await pinned.innerText(), /# Ada\s+- prefers trains/u);
  assert.match(
    await page.locator('[data-segment="working"]').innerText(),
    /^Working memory: [1-9]\d* tokens?$/u,
  );
  // Recall: older turns about the weather, brought back for the latest one, each with why it is there.
  const recalled = page.locator('article.kind-recalled');
  const why = await recalled.locator('.recalled-why').innerText();
  assert.match(why, /seq \d+ · \d{4}-\d\d-\d\d \d\d:\d\d · found by fulltext \(score [\d.]+\)/u);
  assert.match(await recalled.innerText(), /user: What is the weather like in \S+ in June\?/u);
  assert.match(await page.locator('[data-segment="recalled"]').innerText(), /^Recalled: [1-9]\d* tokens?$/u);
  await page.screenshot({ path: path.join(OUTPUT, 'inspector-before-compact.png'), fullPage: true });

  // Compact now: the strategy has work left (see before()); the page shows the new view.
  const viewTitle = await page.locator('#view-title').innerText();
  await page.getByRole('button', { name: 'Compact now' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: /^Compacted/u })
    .waitFor({ timeout: 60_000 });
  assert.ok((await excludedCount(page)) > before, 'more history is excluded after compacting');
  assert.notEqual(await page.locator('#view-title').innerText(), viewTitle);
  assert.equal(
    await page.evaluate(() => document.activeElement?.id),
    'compact-now',
    'focus stays on the button',
  );
  // For the person looking at the screenshot: the summary now in the view, expanded.
  await page
    .getByRole('button', { name: /^Show the \d+ messages? it replaced$/u })
    .first()
    .click();
  await page.screenshot({ path: path.join(OUTPUT, 'inspector.png'), fullPage: true });

  // A link with the token in its fragment (never sent to the server) opens the thread directly,
  // and the token leaves the address bar.
  const linked = await browser.context.newPage();
  await linked.goto(`${base}/ui#/threads/${THREAD}?token=${encodeURIComponent(token)}`);
  await linked.getByRole('heading', { name: `Thread ${THREAD}` }).waitFor();
  assert.equal(new URL(linked.url()).hash, `#/threads/${THREAD}`);
  const listed = await browser.context.newPage();
  await listed.goto(`${base}/ui#token=${encodeURIComponent(token)}`);
  await listed.getByRole('heading', { name: 'Threads', exact: true }).waitFor();
  assert.ok(!listed.url().includes('token'), listed.url());

  // A token in the query string has been sent to the server already: removed, and not used.
  const queried = await browser.context.newPage();
  await queried.goto(`${base}/ui?token=${encodeURIComponent(token)}`);
  await queried.getByText(/was not used: enter it above, or link with #token= instead/u).waitFor();
  assert.equal(new URL(queried.url()).search, '');
  assert.equal(await queried.evaluate(() => sessionStorage.length), 0, 'the query token is not kept');

  assert.deepEqual(errors, [], 'no script errors, no failed requests');
});

/** Whether any of `selector`'s elements is wider than its box or reaches past its column. */
async function overflowing(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).evaluateAll((els) =>
    els
      .filter((el) => {
        const column = (el.closest('.column') ?? el.parentElement)!.getBoundingClientRect();
        return el.scrollWidth > el.clientWidth || el.getBoundingClientRect().right > column.right + 0.5;
      })
      .map((el) => el.textContent ?? ''),
  );
}

test('long reasons stay in their column; #token= edits, unknown threads and the list search and pages', async () => {
  // A record of a pipeline that ran one strategy per group: its strategy and reason repeat eight
  // times, as `thread export` shows them. Imported onto a thread, as a restore would bring it.
  const strategy = Array<string>(8).fill('toolResultCollapse').join('+');
  const reason = Array<string>(8).fill('toolResultCollapse: tokensExceed(1200)').join('; ');
  await api('POST', '/v1/threads/long-reasons/messages', {
    userId: 'bob',
    messages: ['one', 'two', 'three', 'four'].map((t, i) => ({
      id: `lr${i}`,
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${t}`,
    })),
  });
  const exported = await api<{ compactions: unknown[] }>('GET', '/v1/threads/long-reasons/export');
  exported.compactions.push({
    id: 'long-reasons-c1',
    threadId: 'long-reasons',
    strategy,
    reason,
    steps: [],
    warnings: [],
    upToSeq: 2,
    includedTokensBefore: 0,
    includedTokensAfter: 0,
    excludedMessageIds: ['lr0', 'lr1'],
    supersededSummaryIds: [],
    summaries: [],
  });
  await api('POST', '/v1/threads/import?threadId=long-reasons', exported);
  for (const id of ['page-1', 'page-2', 'page-3'])
    await api('POST', `/v1/threads/${id}/messages`, {
      userId: 'bob',
      messages: [{ id: 'm', role: 'user', content: id }],
    });
  // Another tenant, to switch to by editing the fragment.
  const beta = (await tokens.create('beta', 'inspector test')).token;
  await fetch(`${base}/v1/threads/beta-only/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${beta}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ id: 'm', role: 'user', content: 'hi' }] }),
  });

  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1100, height: 900 });
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${base}/ui#/threads/long-reasons?token=${encodeURIComponent(token)}`);
  await page.getByRole('heading', { name: 'Thread long-reasons' }).waitFor();

  // The repeats are counted; the recorded text is the tooltip; nothing reaches past its column.
  const mark = page.locator('article[data-excluded] .exclusion').first();
  assert.match(
    await mark.innerText(),
    /by toolResultCollapse ×8 \(toolResultCollapse: tokensExceed\(1200\) ×8\)/u,
  );
  assert.equal(await mark.getAttribute('title'), `${strategy} (${reason})`);
  assert.deepEqual(await overflowing(page, '.exclusion'), []);
  assert.deepEqual(await overflowing(page, '.msg-text'), []);
  await page.screenshot({ path: path.join(OUTPUT, 'inspector-long-reasons.png'), fullPage: true });

  // Only the fragment changes (`#token=` of another tenant): the page takes the token and reloads.
  await page.evaluate((t) => (location.hash = `token=${t}`), beta);
  await page.getByRole('link', { name: 'beta-only' }).waitFor({ timeout: 15_000 });
  assert.ok(!page.url().includes('token'), page.url());
  assert.equal(await page.locator('a', { hasText: 'long-reasons' }).count(), 0, "acme's threads are gone");

  // An unknown thread: a panel that says so, with the way back to the list.
  await page.evaluate(() => (location.hash = '#/threads/no-such-thread'));
  await page.getByRole('heading', { name: 'Thread not found' }).waitFor({ timeout: 15_000 });
  await page.getByRole('link', { name: '← All threads' }).click();
  await page.getByRole('link', { name: 'beta-only' }).waitFor();

  // The list: search by id prefix, filter by user, page through the API's pages.
  await page.evaluate((t) => (location.hash = `/?limit=2&token=${t}`), token);
  const rows = page.locator('table.threads tbody tr');
  const ids = async () => rows.locator('td:first-child').allInnerTexts();
  // The rows once they are `want`: the page before a search may still be on screen for a moment.
  const rowsBecome = async (want: string[]) => {
    for (const deadline = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 50))) {
      const got = await ids();
      if (JSON.stringify(got) === JSON.stringify(want) || Date.now() > deadline) {
        assert.deepEqual(got, want);
        return;
      }
    }
  };
  await page.getByRole('link', { name: 'Next page »' }).waitFor({ timeout: 15_000 });
  assert.equal(await rows.count(), 2);
  await page.getByLabel('Thread id starts with').fill('page-');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/q=page-/u);
  await rowsBecome(['page-1', 'page-2']);
  await page.getByRole('link', { name: 'Next page »' }).click();
  await rowsBecome(['page-3']);
  assert.equal(await page.getByRole('link', { name: 'Next page »' }).count(), 0, 'the last page');
  await page.goBack();
  await page.getByRole('link', { name: 'page-1' }).waitFor();
  await page.getByLabel('Thread id starts with').fill('');
  await page.getByLabel('User', { exact: true }).fill('ada');
  await page.getByRole('button', { name: 'Search' }).click();
  await rowsBecome([THREAD]);
  await page.screenshot({ path: path.join(OUTPUT, 'inspector-thread-list.png'), fullPage: true });

  assert.deepEqual(errors, [], 'no script errors');
});

test('a thread bound to a provider conversation: the latest response, its lost reason, and the stable prefix', async () => {
  const bound = '/v1/threads/bound-chat';
  await api('PATCH', bound, { service: { kind: 'openai-responses' } });
  await api('POST', `${bound}/messages`, {
    messages: [
      { id: 'u1', role: 'system', content: 'You are brief.' },
      { id: 'u2', role: 'user', content: 'Hello there.' },
    ],
  });
  await api('POST', `${bound}/messages`, {
    messages: [{ id: 'a1', role: 'assistant', content: 'Hi!' }],
    responseId: 'resp_ui_1',
  });
  const ctx = await api<{ tokens: number; cache: { stableTokens: number; prefixHash: string } }>(
    'GET',
    `${bound}/context`,
  );

  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${base}/ui#/threads/bound-chat?token=${encodeURIComponent(token)}`);
  await page.getByRole('heading', { name: 'Thread bound-chat' }).waitFor();
  const service = page.locator('.facts li.service');
  assert.match(
    await service.innerText(),
    /^Provider conversation OpenAI Responses, latest response resp_ui_1 \(seq 3, \d{4}-\d\d-\d\d \d\d:\d\d; the next context sends only what is new\)$/u,
  );
  // Where the stable prefix ends, as context() answered it.
  const cache = page.locator('.column .cache');
  assert.equal(
    await cache.innerText(),
    `Stable prefix: ${ctx.cache.stableTokens} tokens of ${ctx.tokens} (prefix ${ctx.cache.prefixHash.slice(0, 8)}), kept by a provider's prompt cache while it does not change.`,
  );
  assert.equal(await cache.getAttribute('title'), `prefix sha256 ${ctx.cache.prefixHash}`);

  // The provider forgot the response: after a refresh the page says so, and why.
  await api('POST', `${bound}/service-lost`, { reason: 'not_found' });
  await page.getByRole('button', { name: 'Refresh' }).click();
  await page.locator('.facts li.service', { hasText: 'lost (not_found)' }).waitFor();
  assert.match(
    await service.innerText(),
    /resp_ui_1 \(seq 3, [\d-]+ [\d:]+; lost \(not_found\) at [\d-]+ [\d:]+: the next context is the full one\)$/u,
  );
  await page.screenshot({ path: path.join(OUTPUT, 'inspector-service.png'), fullPage: true });

  // A thread that is not bound shows no provider conversation.
  await page.evaluate((id) => (location.hash = `#/threads/${id}`), THREAD);
  await page.getByRole('heading', { name: `Thread ${THREAD}` }).waitFor({ timeout: 15_000 });
  assert.equal(await page.locator('.facts li.service').count(), 0);
  assert.deepEqual(errors, [], 'no script errors');
});

test('a thread forks from its page: the fork opens, names its origin with a link, and a taken id is refused', async () => {
  await api('POST', '/v1/threads/fork-me/messages', {
    userId: 'bob',
    messages: ['one', 'two', 'three', 'four'].map((t, i) => ({
      id: `fm${i}`,
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${t}`,
    })),
  });
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${base}/ui#/threads/fork-me?token=${encodeURIComponent(token)}`);
  await page.getByRole('heading', { name: 'Thread fork-me', exact: true }).waitFor();

  await page.getByLabel('Fork into thread').fill('fork-me-2');
  await page.getByLabel('at message').fill('fm1');
  await page.getByRole('button', { name: 'Fork', exact: true }).click();
  await page.getByRole('heading', { name: 'Thread fork-me-2', exact: true }).waitFor();
  const origin = page.locator('.facts .forked-from');
  assert.equal(await origin.innerText(), 'Forked from fork-me at fm1 (#2)');
  assert.equal(await page.locator('#history-title').innerText(), 'History (2 messages, 0 excluded)');
  await page.screenshot({ path: path.join(OUTPUT, 'inspector-fork.png') });

  await origin.getByRole('link', { name: 'fork-me', exact: true }).click();
  await page.getByRole('heading', { name: 'Thread fork-me', exact: true }).waitFor();
  await page.getByLabel('Fork into thread').fill('fork-me-2');
  await page.getByRole('button', { name: 'Fork', exact: true }).click();
  await page.locator('#status.error', { hasText: '(conflict)' }).waitFor();
  assert.equal(
    await page.getByRole('heading', { name: 'Thread fork-me', exact: true }).count(),
    1,
    'still on the parent',
  );
  assert.deepEqual(errors, []);
});

test("the list and the thread page say whether a thread's workflow is open or closed after idling; memories say when they expire", async () => {
  // One thread that closes after idling (a short closeAfterIdleMs, as the idle-close test uses), one
  // that stays open, and a remembered fact of its user with an expiry.
  const message = (id: string) => ({ messages: [{ id, role: 'user', content: `hello from ${id}` }] });
  await api('POST', '/v1/threads/wf-closing/messages', { userId: 'cleo', ...message('c1') });
  // No idle extraction (idleMs 0): it would keep the thread open for its default 10 minutes.
  await api('PATCH', '/v1/threads/wf-closing', { closeAfterIdleMs: 300, idleMs: 0 });
  await api('POST', '/v1/threads/wf-open/messages', { userId: 'cleo', ...message('o1') });
  const expiresAt = '2099-01-31T12:00:00.000Z';
  await api('POST', '/v1/users/cleo/memories', { text: 'Cleo prefers night trains', expiresAt });
  const listed = async () =>
    (await api<{ threads: { threadId: string; open?: boolean }[] }>('GET', '/v1/threads?prefix=wf-')).threads;
  for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const open = (await listed()).map((t) => [t.threadId, t.open]);
    if (
      JSON.stringify(open) ===
      JSON.stringify([
        ['wf-closing', false],
        ['wf-open', true],
      ])
    )
      break;
    assert.ok(Date.now() < deadline, `wf-closing did not close: ${JSON.stringify(open)}`);
  }

  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${base}/ui#/?q=wf-&token=${encodeURIComponent(token)}`);
  const rows = page.locator('table.threads tbody tr');
  await page.getByRole('link', { name: 'wf-open' }).waitFor();
  assert.equal(await page.getByRole('columnheader', { name: 'Workflow' }).count(), 1);
  assert.deepEqual(await rows.locator('td.workflow').allInnerTexts(), ['closed (idle)', 'open']);
  await page.screenshot({ path: path.join(OUTPUT, 'inspector-idle-closed.png') });

  // The thread page: the fact, read from the state (reading it does not open the thread again).
  await page.getByRole('link', { name: 'wf-closing' }).click();
  await page.getByRole('heading', { name: 'Thread wf-closing', exact: true }).waitFor();
  assert.equal(await page.locator('.facts li.workflow').innerText(), 'Workflow closed (idle)');
  const memory = page.locator('article.memory', { hasText: 'Cleo prefers night trains' });
  assert.equal(await memory.locator('.expires').innerText(), 'expires 2099-01-31 12:00:00 UTC');

  await page.evaluate(() => (location.hash = '#/threads/wf-open'));
  await page.getByRole('heading', { name: 'Thread wf-open', exact: true }).waitFor({ timeout: 15_000 });
  assert.equal(await page.locator('.facts li.workflow').innerText(), 'Workflow open');
  assert.deepEqual(errors, [], 'no script errors');
});

test('counts say one message, one token, not "1 messages" (the facts, the history heading, the status line)', async () => {
  await api('POST', '/v1/threads/one-message/messages', {
    messages: [{ id: 'om1', role: 'user', content: 'hi' }],
  });
  await api('PATCH', '/v1/threads/one-message', { budget: 1 });
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${base}/ui#/threads/one-message?token=${encodeURIComponent(token)}`);
  await page.getByRole('heading', { name: 'Thread one-message', exact: true }).waitFor();
  const facts = await page.locator('.facts').innerText();
  assert.match(facts, /History 1 message, 0 excluded/u);
  assert.match(facts, /Budget 1 token\b/u);
  assert.equal(await page.locator('#history-title').innerText(), 'History (1 message, 0 excluded)');
  await page.locator('#status', { hasText: 'Thread one-message:' }).waitFor();
  assert.match(
    await page.locator('#status').innerText(),
    /^Thread one-message: 1 message, \d[\d,]* tokens? in view\.$/u,
  );
  assert.doesNotMatch(await page.locator('body').innerText(), /\b1 (messages|tokens)\b/u);
  assert.deepEqual(errors, []);
});
