import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageIndex } from '../../src/compaction/message-index.js';
import { conversation } from '../support/conversation.js';

const kinds = (index: MessageIndex) => index.groups.map((g) => `${g.kind}:${g.messageIds.join(',')}`);

describe('grouping', () => {
  test('system, user, assistant text and turns', () => {
    const c = conversation();
    c.system('be brief');
    c.assistant('hello before any user'); // turn 0
    c.user('hi');
    c.assistant('hello');
    c.system('mid-conversation instruction');
    c.user('again');
    const index = MessageIndex.from(c.metas(10));
    assert.deepEqual(kinds(index), [
      'system:m1',
      'assistant_text:m2',
      'user:m3',
      'assistant_text:m4',
      'system:m5',
      'user:m6',
    ]);
    assert.deepEqual(
      index.groups.map((g) => g.turn),
      [0, 0, 1, 1, 1, 2],
    );
    const m = index.metrics;
    assert.equal(m.includedTurns, 2);
    assert.equal(m.includedGroups, 6);
    assert.equal(m.includedNonSystemGroups, 4);
    assert.equal(m.includedTokens, 60);
  });

  test('parallel tool calls and their results form one group', () => {
    const c = conversation();
    c.user('weather and docs?');
    c.call(['c1', 'get_weather'], ['c2', 'search_docs']);
    c.result('c2', '3 hits');
    c.result('c1', 'sunny');
    c.assistant('done');
    const index = MessageIndex.from(c.metas(5));
    assert.deepEqual(kinds(index), ['user:m1', 'tool_call:m2,m3,m4', 'assistant_text:m5']);
    assert.equal(index.groups[1]!.pendingCallIds, undefined);
    assert.equal(index.groups[1]!.tokens, 15);
    assert.equal(index.metrics.includedToolCallGroups, 1);
  });

  test('a result far from its call joins the call when the match is unambiguous', () => {
    const c = conversation();
    c.user('start a job');
    c.call(['job', 'start_job']);
    c.user('while we wait, hello');
    c.assistant('hello');
    c.result('job', 'job finished');
    const index = MessageIndex.from(c.metas(5));
    assert.deepEqual(kinds(index), ['user:m1', 'tool_call:m2,m5', 'user:m3', 'assistant_text:m4']);
  });

  test('a result with no matching call is an excluded orphan', () => {
    const c = conversation();
    c.user('hi');
    c.result('nope', 'stray');
    const index = MessageIndex.from(c.metas(5));
    const orphan = index.groups[1]!;
    assert.equal(orphan.kind, 'orphan_tool_result');
    assert.equal(orphan.excluded?.reason, 'orphan_tool_result');
    assert.equal(index.metrics.includedTokens, 5);
  });

  test('a call id issued twice makes its results orphans and both calls unsendable', () => {
    const c = conversation();
    c.call(['dup', 'a']);
    c.call(['dup', 'b']);
    c.result('dup', 'which one?');
    const index = MessageIndex.from(c.metas(5));
    assert.deepEqual(kinds(index), ['tool_call:m1', 'tool_call:m2', 'orphan_tool_result:m3']);
    assert.deepEqual(index.groups[0]!.pendingCallIds, ['dup']);
  });

  test('a second result for an answered call is an orphan', () => {
    const c = conversation();
    c.call(['c1', 'a']);
    c.result('c1', 'first');
    c.result('c1', 'again');
    const index = MessageIndex.from(c.metas(5));
    assert.deepEqual(kinds(index), ['tool_call:m1,m2', 'orphan_tool_result:m3']);
  });

  test('reasoning joins the assistant message after it, a call included', () => {
    const c = conversation();
    c.user('q');
    c.reasoning('thinking');
    c.call(['c1', 'lookup']);
    c.result('c1', 'found');
    c.reasoning('thinking about the result');
    c.assistant('it is found');
    c.user('q2');
    c.reasoning('hmm');
    c.assistant('answer');
    const index = MessageIndex.from(c.metas(5));
    assert.deepEqual(kinds(index), [
      'user:m1',
      'tool_call:m2,m3,m4',
      'assistant_text:m5,m6',
      'user:m7',
      'assistant_text:m8,m9',
    ]);
    assert.equal(index.metrics.includedToolCallGroups, 1);
  });

  test('reasoning after a finished tool group joins the next call, not the finished group', () => {
    const c = conversation();
    c.user('q');
    c.call(['a', 'one']);
    c.result('a', 'ra');
    c.reasoning('now b');
    c.call(['b', 'two']);
    c.result('b', 'rb');
    const index = MessageIndex.from(c.metas(5));
    // Before the fix the reasoning went with a's group, so dropping a dropped b's reasoning.
    assert.deepEqual(kinds(index), ['user:m1', 'tool_call:m2,m3', 'tool_call:m4,m5,m6']);
    assert.equal(index.metrics.includedToolCallGroups, 2);
  });

  test('reasoning between a call and its results stays in the call group', () => {
    const c = conversation();
    c.call(['a', 'one'], ['b', 'two']);
    c.result('a', 'ra');
    c.reasoning('waiting for b');
    c.result('b', 'rb');
    const index = MessageIndex.from(c.metas(5));
    assert.deepEqual(kinds(index), ['tool_call:m1,m2,m3,m4']);
  });

  test('reasoning with no assistant message after it is never sent', () => {
    const c = conversation();
    c.user('q');
    c.call(['a', 'one']);
    c.result('a', 'ra');
    c.reasoning('thinking about the result');
    c.user('q2');
    const index = MessageIndex.from(c.metas(5));
    assert.deepEqual(kinds(index), ['user:m1', 'tool_call:m2,m3', 'assistant_text:m4', 'user:m5']);
    assert.equal(index.groups[2]!.reasoningOnly, true);
  });

  test('a pending tool call is not sendable until its result arrives', () => {
    const c = conversation();
    c.call(['c1', 'slow']);
    const index = MessageIndex.from(c.metas(5));
    assert.deepEqual(index.groups[0]!.pendingCallIds, ['c1']);
  });
});

describe('index state', () => {
  test('re-delivered sequence numbers are ignored', () => {
    const c = conversation();
    c.user('a');
    c.user('b');
    const metas = c.metas(3);
    const index = new MessageIndex();
    assert.equal(index.append(metas[0]!), true);
    assert.equal(index.append(metas[1]!), true);
    assert.equal(index.append(metas[0]!), false);
    assert.equal(index.metrics.totalMessages, 2);
    assert.equal(index.lastSeq, 2);
  });

  test('round-trips through JSON and keeps grouping where it left off', () => {
    const c = conversation();
    c.user('q');
    c.call(['c1', 'lookup']);
    const metas = c.metas(4);
    const index = MessageIndex.from(metas);
    index.exclude(index.groups[0]!, { reason: 'truncated', strategy: 'test' });
    const restored = MessageIndex.fromJSON(JSON.parse(JSON.stringify(index.toJSON())));
    assert.deepEqual(restored.toJSON(), index.toJSON());
    const more = conversation();
    more.user('q');
    more.call(['c1', 'lookup']);
    more.result('c1', 'answer');
    restored.append(more.metas(4)[2]!);
    assert.deepEqual(restored.groups[1]!.messageIds, ['m2', 'm3']);
    assert.equal(restored.metrics.includedTokens, 8);
  });

  test('appending examines only the new messages, whatever the index size', () => {
    const big = conversation();
    for (let i = 0; i < 5000; i++) {
      big.user(`q${i}`);
      big.call([`c${i}`, 'tool']);
      big.result(`c${i}`, 'r');
    }
    const index = MessageIndex.from(big.metas(3));
    const before = index.examined;
    const tail = conversation('n');
    tail.user('x');
    tail.assistant('y');
    for (const meta of tail.metas(3)) index.append({ ...meta, seq: meta.seq! + 15000 });
    // Each message looks at itself and at the open group before it: 2 × 2, not 15,000.
    assert.equal(index.examined - before, 4);
  });

  test('prune drops excluded groups but keeps metrics and pending calls of kept groups', () => {
    const c = conversation();
    c.user('old');
    c.assistant('old answer');
    c.user('new');
    c.call(['c1', 'tool']);
    const index = MessageIndex.from(c.metas(5));
    index.exclude(index.groups[0]!, { reason: 'truncated', strategy: 't' });
    index.exclude(index.groups[1]!, { reason: 'truncated', strategy: 't' });
    const before = index.metrics;
    assert.equal(index.prune(), 2);
    assert.deepEqual(index.metrics, before);
    assert.equal(index.groups.length, 2);
    const late = conversation();
    late.user('old');
    late.assistant('old answer');
    late.user('new');
    late.call(['c1', 'tool']);
    late.result('c1', 'r');
    index.append(late.metas(5)[4]!);
    assert.deepEqual(index.groups[1]!.messageIds, ['m4', 'm5']);
  });
});

describe('tool-call group metrics', () => {
  function tools() {
    const c = conversation();
    c.user('q');
    c.reasoning('thinking'); // becomes a tool-call group when the call follows
    c.call(['a', 'one'], ['b', 'two']);
    c.result('a', 'ra');
    c.result('b', 'rb');
    c.call(['c', 'three']);
    c.result('c', 'rc');
    return c;
  }

  test('totalToolCallGroups counts every tool-call group, and keeps counting excluded ones', () => {
    const index = MessageIndex.from(tools().metas(2));
    assert.equal(index.metrics.totalToolCallGroups, 2);
    assert.equal(index.metrics.includedToolCallGroups, 2);
    index.exclude(index.groups[1]!, { reason: 'tool_call_dropped', strategy: 'test' });
    assert.equal(index.metrics.includedToolCallGroups, 1);
    assert.equal(index.metrics.totalToolCallGroups, 2);
  });

  test('a state saved before the metric existed gets it from its groups', () => {
    const state = MessageIndex.from(tools().metas(2)).toJSON();
    delete (state.metrics as Partial<typeof state.metrics>).totalToolCallGroups;
    const restored = MessageIndex.fromJSON(state);
    assert.equal(restored.metrics.totalToolCallGroups, 2);
  });
});

describe('included metrics count what the view sends', () => {
  test('a call waiting for its result and reasoning not yet answered count once they can be sent', () => {
    const c = conversation();
    c.user('q');
    c.call(['a', 'slow']);
    const index = MessageIndex.from(c.metas(5));
    assert.deepEqual(
      [index.metrics.includedTokens, index.metrics.includedMessages, index.metrics.includedGroups],
      [5, 1, 1],
    );
    assert.equal(index.metrics.includedToolCallGroups, 0);
    const more = conversation();
    more.user('q');
    more.call(['a', 'slow']);
    more.result('a', 'done');
    more.reasoning('so');
    index.append(more.metas(5)[2]!);
    assert.deepEqual(
      [index.metrics.includedTokens, index.metrics.includedMessages, index.metrics.includedToolCallGroups],
      [15, 3, 1],
    );
    index.append(more.metas(5)[3]!); // reasoning-only: waits for the reply it leads to
    assert.equal(index.metrics.includedTokens, 15);
    more.assistant('answer');
    index.append(more.metas(5)[4]!);
    assert.deepEqual([index.metrics.includedTokens, index.metrics.includedGroups], [25, 3]);
    assert.equal(index.metrics.totalTokens, 25);
  });

  test('excluding or including an unsent group leaves the metrics alone', () => {
    const c = conversation();
    c.user('q');
    c.call(['a', 'slow']);
    const index = MessageIndex.from(c.metas(5));
    const pending = index.groups[1]!;
    index.exclude(pending, { reason: 'test', strategy: 'test' });
    index.include(pending);
    assert.deepEqual([index.metrics.includedTokens, index.metrics.includedGroups], [5, 1]);
  });

  test('a state saved when unsent groups were counted is read right', () => {
    const c = conversation();
    c.user('q');
    c.call(['a', 'slow']);
    const state = MessageIndex.from(c.metas(5)).toJSON();
    Object.assign(state.metrics, { includedTokens: 10, includedMessages: 2, includedGroups: 2 });
    state.metrics.includedNonSystemGroups = 2;
    state.metrics.includedToolCallGroups = 1;
    const restored = MessageIndex.fromJSON(state);
    const m = restored.metrics;
    assert.deepEqual(
      [
        m.includedTokens,
        m.includedMessages,
        m.includedGroups,
        m.includedNonSystemGroups,
        m.includedToolCallGroups,
      ],
      [5, 1, 1, 1, 0],
    );
  });
});

describe('MessageIndex.fromView', () => {
  test('a stored view (a summary, then included messages) gives the view in the index and the history in the totals', () => {
    const c = conversation();
    for (let i = 0; i < 4; i++) {
      c.user(`question ${i}`);
      c.assistant(`answer ${i}`);
    }
    const metas = c.metas(10).map((m, i) => ({ ...m, seq: i + 1 }));
    // The view after a compaction summarized the first two turns (seqs 1–4).
    const summary = { id: 's1', role: 'system' as const, shape: 'summary' as const, tokens: 7, bytes: 20 };
    const view = [{ meta: summary, seq: 1 }, ...metas.slice(4).map(({ seq, ...meta }) => ({ meta, seq }))];
    const index = MessageIndex.fromView(view, { lastSeq: 8, messages: 8, tokens: 80, turns: 4 });

    assert.deepEqual(kinds(index), [
      'summary:s1',
      'user:m5',
      'assistant_text:m6',
      'user:m7',
      'assistant_text:m8',
    ]);
    const m = index.metrics;
    assert.equal(m.includedTokens, 47, 'the summary and four messages');
    assert.equal(m.includedMessages, 5);
    assert.equal(m.totalTokens, 87, 'the whole history and the summary');
    assert.equal(m.totalMessages, 9);
    assert.equal(m.totalTurns, 4);
    assert.equal(index.lastSeq, 8);
    assert.equal(index.group('s1')?.firstSeq, 1, 'the summary sits at its position seq');
    // A message after the view's last seq is applied; one at or below it is a re-delivery.
    assert.equal(index.append({ ...metas[7]!, id: 'late', seq: 8 }), false);
    assert.equal(index.append({ id: 'm9', role: 'user', shape: 'user', tokens: 10, bytes: 5, seq: 9 }), true);
  });

  test('when the newest messages are outside the view, lastSeq is still the history’s', () => {
    const c = conversation();
    c.user('only');
    const [meta] = c.metas(10);
    const index = MessageIndex.fromView([{ meta: meta!, seq: 1 }], {
      lastSeq: 3,
      messages: 3,
      tokens: 30,
      turns: 1,
    });
    assert.equal(index.lastSeq, 3);
    assert.equal(index.metrics.totalMessages, 3);
  });
});
