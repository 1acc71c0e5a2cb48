/**
 * A seeded synthetic agent conversation for benchmarks: the same seed always gives the same messages,
 * so figures from different machines or commits measure the same input.
 *
 * Shape (tuned so that the benchmark exercises every grouping path at realistic proportions):
 * - one system prompt of about 500 characters first;
 * - turns of a user message (20–400 characters) and an assistant reply (50–1,500 characters);
 * - in about 23% of turns the assistant first calls tools: one call, or 2–3 parallel calls in one
 *   message, each answered by its own tool message (100–4,000 characters, mostly JSON-like), sometimes
 *   a second round; this puts about a quarter of all messages in tool-call groups;
 * - occasionally a reasoning-only message before a reply or a call (it joins that group).
 *
 * Lengths are skewed towards the short end (most chat messages are short, a few are long), and text
 * mixes common words with identifiers, numbers, paths and a little non-ASCII, so that exact BPE
 * counting does real merge work instead of hitting a handful of memoised words.
 */
import type { Message, Part } from '../src/model/message.js';
import { mulberry32 } from '../test/support/prng.js';

export { mulberry32 };

const WORDS = (
  'the of and to a in is it you that he was for on are with as I his they be at one have this from ' +
  'or had by hot word but what some we can out other were all there when up use your how said an ' +
  'each she which do their time if will way about many then them write would like so these her long ' +
  'make thing see him two has look more day could go come did number sound no most people my over ' +
  'know water than call first who may down side been now find any new work part take get place made ' +
  'live where after back little only round man year came show every good me give our under name very ' +
  'through just form sentence great think say help low line differ turn cause much mean before move ' +
  'right boy old too same tell does set three want air well also play small end put home read hand ' +
  'port large spell add even land here must big high such follow act why ask men change went light ' +
  'function server request response error database query index table column user account payment ' +
  'invoice deploy build test release branch commit merge config timeout retry cache memory thread ' +
  'token budget summary context window model prompt message tool result schema field value string ' +
  'integer boolean null array object latency throughput cluster node region bucket upload download ' +
  'customer order shipping address weather forecast temperature meeting calendar schedule report ' +
  'analysis revenue quarter growth forecast migration rollback incident alert dashboard metric'
).split(' ');

const NON_ASCII = ['café', 'naïve', 'Zürich', 'São Paulo', 'résumé', '東京', 'Ελλάδα', 'données', '✓', '€42'];
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'zen',
  'tor',
  'qua',
  'bex',
  'ul',
  'rin',
  'vos',
  'da',
  'pex',
  'sho',
  'ny',
];
const TOOLS = [
  'search_web',
  'read_file',
  'run_sql',
  'get_weather',
  'http_get',
  'list_directory',
  'send_email',
];

/** Options of {@link syntheticConversation}. */
export interface SyntheticOptions {
  /** Exact number of messages. */
  messages: number;
  /** PRNG seed. Default 42. */
  seed?: number;
}

/** Counts of what was generated, for the benchmark's header. */
export interface SyntheticStats {
  messages: number;
  characters: number;
  toolCallMessages: number;
  toolResultMessages: number;
  reasoningMessages: number;
}

/**
 * Generates a deterministic conversation of exactly `options.messages` messages (ids `m1`, `m2`, …),
 * always ending in a complete state (no tool call left waiting for its result).
 */
export function syntheticConversation(options: SyntheticOptions): Message[] {
  const n = options.messages;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`messages: expected a whole number ≥ 1, got ${n}`);
  const rand = mulberry32(options.seed ?? 42);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  // Skewed length: squaring a uniform draw puts most messages near `lo`, a few near `hi`.
  const length = (lo: number, hi: number) => lo + Math.floor(rand() * rand() * (hi - lo + 1));

  const identifier = () => {
    let s = '';
    for (let k = int(2, 4); k > 0; k--) s += pick(SYLLABLES);
    return rand() < 0.5
      ? s
      : s.charAt(0).toUpperCase() + s.slice(1) + pick(['Id', 'Config', 'Handler', '_v2']);
  };
  const token = (): string => {
    const r = rand();
    if (r < 0.82) return pick(WORDS);
    if (r < 0.9) return identifier();
    if (r < 0.95) return String(int(0, 99_999));
    if (r < 0.98) return `/${pick(WORDS)}/${identifier()}.ts`;
    return pick(NON_ASCII);
  };
  const text = (chars: number): string => {
    let s = '';
    while (s.length < chars) {
      s += token();
      const r = rand();
      s += r < 0.08 ? '. ' : r < 0.12 ? ', ' : r < 0.13 ? '\n\n' : ' ';
    }
    return s.slice(0, chars);
  };
  // Tool output: JSON records most of the time, log-like text otherwise.
  const toolResult = (chars: number): string => {
    if (rand() < 0.3) return text(chars);
    const rows: string[] = [];
    let size = 2;
    while (size < chars) {
      const row = JSON.stringify({
        id: `${identifier()}-${int(1000, 9999)}`,
        name: text(int(8, 40)),
        value: int(0, 1_000_000) / 100,
        ok: rand() < 0.9,
        tags: [pick(WORDS), pick(WORDS)],
      });
      rows.push(row);
      size += row.length + 1;
    }
    return `[${rows.join(',')}]`.slice(0, Math.max(chars, 2));
  };

  const out: Message[] = [];
  let callSeq = 0;
  const add = (role: Message['role'], parts: Part[]) => out.push({ id: `m${out.length + 1}`, role, parts });
  add('system', [{ type: 'text', text: text(int(450, 550)) }]);

  while (out.length < n) {
    // Plan a whole turn first so that it is either emitted complete or replaced by a shorter one.
    const turn: [Message['role'], Part[]][] = [['user', [{ type: 'text', text: text(length(20, 400)) }]]];
    if (rand() < 0.23) {
      for (let round = rand() < 0.2 ? 2 : 1; round > 0; round--) {
        if (rand() < 0.08) turn.push(['assistant', [{ type: 'reasoning', text: text(length(80, 800)) }]]);
        const calls = rand() < 0.25 ? int(2, 3) : 1;
        const parts: Part[] = [];
        for (let k = 0; k < calls; k++) {
          const args = JSON.stringify({ query: text(int(10, 60)), limit: int(1, 50) });
          parts.push({ type: 'tool_call', callId: `call_${++callSeq}`, name: pick(TOOLS), arguments: args });
        }
        turn.push(['assistant', parts]);
        for (const p of parts) {
          if (p.type !== 'tool_call') continue;
          turn.push([
            'tool',
            [{ type: 'tool_result', callId: p.callId, name: p.name, result: toolResult(length(100, 4000)) }],
          ]);
        }
      }
    }
    if (rand() < 0.05) turn.push(['assistant', [{ type: 'reasoning', text: text(length(80, 800)) }]]);
    turn.push(['assistant', [{ type: 'text', text: text(length(50, 1500)) }]]);
    const room = n - out.length;
    if (turn.length > room) {
      // Not enough room for this turn: end with plain messages so that no call waits for a result.
      add('user', turn[0]![1]);
      if (room > 1) add('assistant', [{ type: 'text', text: text(length(50, 1500)) }]);
      continue;
    }
    for (const [role, parts] of turn) add(role, parts);
  }
  return out;
}

/** Summarises a generated conversation (for the benchmark's header). */
export function syntheticStats(messages: readonly Message[]): SyntheticStats {
  const stats: SyntheticStats = {
    messages: messages.length,
    characters: 0,
    toolCallMessages: 0,
    toolResultMessages: 0,
    reasoningMessages: 0,
  };
  for (const m of messages) {
    for (const p of m.parts) {
      stats.characters +=
        p.type === 'text' || p.type === 'reasoning'
          ? p.text.length
          : p.type === 'tool_call'
            ? p.arguments.length
            : p.result.length;
    }
    if (m.role === 'tool') stats.toolResultMessages++;
    else if (m.parts.some((p) => p.type === 'tool_call')) stats.toolCallMessages++;
    else if (m.parts.every((p) => p.type === 'reasoning')) stats.reasoningMessages++;
  }
  return stats;
}
