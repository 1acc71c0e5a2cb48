/**
 * The local fallback memory extractor: what runs when no LLM is configured. It recognises a few
 * common ways users state facts about themselves, in their own messages only, and writes each as a
 * short third-person sentence whose opening words name its kind:
 *
 * | the user says | fact | category | one value at a time |
 * | --- | --- | --- | --- |
 * | my name is X, call me X | User's name is X | name | yes |
 * | I live in X, I moved to X, I'm based in X | User lives in X | location | yes |
 * | I work at/for X | User works at X | work | yes |
 * | I work as X | User works as X | occupation | yes |
 * | my favorite T is X | User's favorite T is X | favorite | yes (per T) |
 * | I prefer X | User prefers X | preference | no |
 * | I like/love/enjoy X | User likes X | preference | no |
 * | I don't like X, I hate/dislike X | User dislikes X | dislike | no |
 * | I'm allergic to X | User is allergic to X | allergy | no |
 *
 * Rules: deterministic; questions are skipped; a fact equal to an existing memory (case-insensitive)
 * is skipped; a one-value fact supersedes the existing memory that opens with the same words
 * (`User lives in …`) when the value differs; "likes X" and "dislikes X" supersede each other; within
 * one batch the last value of a one-value fact wins.
 */
import { characterCount, firstCharacters } from '../model/limits.js';
import { textOf } from '../model/message.js';
import type { MemoryCategory } from './memory-schema.js';
import type {
  ExistingMemory,
  ExtractRequest,
  ExtractResult,
  MemoryExtractor,
  MemoryProposal,
} from './memory-extractor.js';

/** The `model` recorded with facts from the local extractor. */
export const LOCAL_EXTRACTOR_MODEL = 'local-rules';

/** Longest value kept from a statement, in characters (a fact is a short sentence, not a paragraph). */
const MAX_VALUE_CHARS = 80;

/** Where a value ends: a clause boundary or punctuation. */
const END = String.raw`(?=\s+(?:and|but|because|so|though|although|since|which|where|who)\b|\s*[,;:.!?()]|$)`;
const V = String.raw`(.+?)`;
const IM = String.raw`i(?:['’]m|\s+am)`;

/** Time words after a value, dropped from the fact. */
const TRAILING_TIME =
  /\s+(?:(?:last|this|next)\s+(?:week|month|year|spring|summer|autumn|fall|winter)|yesterday|today|now|recently|lately|these\s+days|(?:a|an|one|two|three|a\s+few|\d+)\s+(?:days?|weeks?|months?|years?)\s+ago)$/iu;

interface Rule {
  category: MemoryCategory;
  pattern: RegExp;
  /** The fact's opening words (its key) and its full text, from the match. */
  fact(m: RegExpExecArray): { key: string; text: string } | undefined;
  /** One value at a time: a new value supersedes the old. */
  single: boolean;
  /** The fact this one contradicts (likes X ↔ dislikes X). */
  opposite?(text: string): string;
}

const rx = (source: string) => new RegExp(String.raw`\b` + source + END, 'iu');
const simple = (key: string) => (m: RegExpExecArray) => {
  const value = cleanValue(m[1]);
  return value ? { key, text: `${key} ${value}` } : undefined;
};

const RULES: Rule[] = [
  {
    category: 'name',
    single: true,
    pattern: rx(`my\\s+name\\s+is\\s+${V}`),
    fact: (m) => nameFact(m, false),
  },
  // "call me tomorrow" is not a name: here the name must be capitalised.
  { category: 'name', single: true, pattern: rx(`call\\s+me\\s+${V}`), fact: (m) => nameFact(m, true) },
  {
    category: 'location',
    single: true,
    pattern: rx(
      `(?:i\\s+(?:live|am\\s+living)\\s+in|i(?:\\s+have|['’]ve)?\\s+(?:just\\s+)?moved\\s+to|${IM}\\s+based\\s+in)\\s+${V}`,
    ),
    fact: simple('User lives in'),
  },
  {
    category: 'work',
    single: true,
    pattern: rx(`i\\s+work\\s+(?:at|for)\\s+${V}`),
    fact: simple('User works at'),
  },
  {
    category: 'occupation',
    single: true,
    pattern: rx(`i\\s+work\\s+as\\s+${V}`),
    fact: simple('User works as'),
  },
  {
    category: 'favorite',
    single: true,
    pattern: rx(`my\\s+favou?rite\\s+([\\p{L}\\s]{1,30}?)\\s+is\\s+${V}`),
    fact: (m) => {
      const thing = cleanValue(m[1])?.toLowerCase();
      const value = cleanValue(m[2]);
      return thing && value
        ? { key: `User's favorite ${thing} is`, text: `User's favorite ${thing} is ${value}` }
        : undefined;
    },
  },
  {
    category: 'dislike',
    single: false,
    pattern: rx(
      `i\\s+(?:(?:don['’]t|do\\s+not)\\s+(?:really\\s+)?(?:like|enjoy)|hate|dislike|can['’]t\\s+stand)\\s+${V}`,
    ),
    fact: simple('User dislikes'),
    opposite: (text) => text.replace(/^User dislikes /, 'User likes '),
  },
  {
    category: 'preference',
    single: false,
    pattern: rx(`i\\s+(?:really\\s+)?prefer\\s+${V}`),
    fact: simple('User prefers'),
  },
  {
    category: 'preference',
    single: false,
    pattern: rx(`i\\s+(?:really\\s+)?(?:like|love|enjoy)\\s+${V}`),
    fact: simple('User likes'),
    opposite: (text) => text.replace(/^User likes /, 'User dislikes '),
  },
  {
    category: 'allergy',
    single: false,
    pattern: rx(`${IM}\\s+allergic\\s+to\\s+${V}`),
    fact: simple('User is allergic to'),
  },
];

/**
 * The rule-based extractor (no LLM, no I/O). Reads user messages only.
 * @example
 * const { proposals } = await localMemoryExtractor({ messages, existing: [] });
 */
export const localMemoryExtractor: MemoryExtractor = async (req: ExtractRequest): Promise<ExtractResult> => ({
  proposals: extract(req),
  model: LOCAL_EXTRACTOR_MODEL,
});

interface Found {
  rule: Rule;
  key: string;
  text: string;
  sourceMessageIds: string[];
}

function extract(req: ExtractRequest): MemoryProposal[] {
  const found: Found[] = [];
  for (const message of req.messages) {
    if (message.role !== 'user') continue; // facts about the user come from the user
    for (const sentence of sentences(textOf(message))) {
      for (const rule of RULES) {
        const m = rule.pattern.exec(sentence);
        const fact = m && rule.fact(m);
        if (!fact) continue;
        const same = found.findIndex((f) => norm(f.text) === norm(fact.text));
        if (same >= 0) {
          found[same]!.sourceMessageIds = [...new Set([...found[same]!.sourceMessageIds, message.id])];
          continue;
        }
        // One value at a time: a later statement in the same batch wins.
        if (rule.single) {
          const earlier = found.findIndex((f) => f.rule.single && norm(f.key) === norm(fact.key));
          if (earlier >= 0) found.splice(earlier, 1);
        }
        found.push({ rule, ...fact, sourceMessageIds: [message.id] });
      }
    }
  }
  const known = new Set(req.existing.map((e) => norm(e.text)));
  return found.filter((f) => !known.has(norm(f.text))).map((f) => propose(f, req.existing));
}

function propose(f: Found, existing: readonly ExistingMemory[]): MemoryProposal {
  const proposal: MemoryProposal = {
    text: f.text,
    category: f.rule.category,
    sourceMessageIds: f.sourceMessageIds,
  };
  const opposite = f.rule.opposite?.(f.text);
  // The newest matching memory is the live one when several are listed (callers list oldest first).
  const old = [...existing]
    .reverse()
    .find((e) =>
      f.rule.single
        ? norm(e.text).startsWith(norm(f.key) + ' ')
        : opposite !== undefined && norm(e.text) === norm(opposite),
    );
  if (old) {
    proposal.supersedes = old.id;
    proposal.reason = `the user now says "${f.text}" (was "${old.text}")`;
  }
  return proposal;
}

/** Statements, without questions ("do you know where I live in Berlin?" states nothing). */
function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/u)
    .map((s) => s.trim())
    .filter((s) => s && !s.endsWith('?'));
}

/** A name: the first word, and following words only when capitalised ("Ana Lima", not "Ana by the way"). */
function nameFact(m: RegExpExecArray, capitalised: boolean): { key: string; text: string } | undefined {
  const words = (m[1] ?? '').trim().split(/\s+/u);
  const name: string[] = [];
  for (const [i, word] of words.entries()) {
    const w = word.replace(/^["'“‘]+|["'”’.!]+$/gu, '');
    if (!/^[\p{L}][\p{L}'’-]*$/u.test(w) || ((i > 0 || capitalised) && !/^\p{Lu}/u.test(w))) break;
    if (name.length === 3) break;
    name.push(w);
  }
  if (name.length === 0) return undefined;
  const full = name.join(' ');
  return { key: "User's name is", text: `User's name is ${full[0]!.toUpperCase()}${full.slice(1)}` };
}

/** Trims, drops quotes, turns first person into third ("my sister" → "their sister"), bounds length. */
function cleanValue(raw: string | undefined): string | undefined {
  let v = (raw ?? '').trim().replace(/^["'“‘]+|["'”’]+$/gu, '');
  v = v
    .replace(/\bmy\b/giu, 'their')
    .replace(/\bmine\b/giu, 'theirs')
    .replace(/\bmyself\b/giu, 'themselves')
    .replace(/\bme\b/giu, 'them');
  // "I moved to Berlin last month": the fact is where, not when.
  while (TRAILING_TIME.test(v)) v = v.replace(TRAILING_TIME, '');
  if (characterCount(v) > MAX_VALUE_CHARS) v = firstCharacters(v, MAX_VALUE_CHARS).replace(/\s+\S*$/u, '');
  return v || undefined;
}

function norm(text: string): string {
  return text.trim().replace(/\.$/, '').replace(/\s+/g, ' ').toLowerCase();
}
