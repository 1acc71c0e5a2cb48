/**
 * Byte-pair-encoding token counting over tiktoken rank tables (internal to src/tokenizers).
 *
 * Why not `Tiktoken.encode` from js-tiktoken: its merge loop copies and joins byte arrays for every
 * candidate pair, which is quadratic with a large constant (measured: a 4,000-letter run takes 1.3 s,
 * 340 Chinese characters 190 ms, a 1 MB run never finishes). This module counts the same tokens — same
 * split pattern, same ranks, same merge order (lowest rank first, leftmost on ties) — with bytes kept
 * as one-char-per-byte strings (cheap slices, direct map keys) and a heap for long pieces. The tests
 * check it against js-tiktoken on random text.
 */
import type { TiktokenBPE } from 'js-tiktoken/lite';

/** A loaded encoding: the split pattern and the rank of every token, keyed by its bytes. */
export interface BpeTable {
  /** The encoding's pre-tokenisation pattern (global, unicode), reused across calls. */
  readonly pattern: RegExp;
  /** Token bytes (one char per byte, U+0000–U+00FF) → rank. */
  readonly ranks: ReadonlyMap<string, number>;
  /** Longest token in bytes: longer spans need no lookup. */
  readonly maxTokenBytes: number;
  /** Token counts of recently seen pieces (bounded; see {@link countBpeTokens}). */
  readonly memo: Map<string, number>;
}

/** Builds a table from js-tiktoken's compressed rank data (`! offset base64 base64 ...` lines). */
export function loadBpeTable(bpe: TiktokenBPE): BpeTable {
  const ranks = new Map<string, number>();
  let maxTokenBytes = 0;
  for (const line of bpe.bpe_ranks.split('\n')) {
    if (line === '') continue;
    const fields = line.split(' ');
    const offset = Number.parseInt(fields[1]!, 10);
    for (let j = 2; j < fields.length; j++) {
      const bytes = atob(fields[j]!); // a "binary string": exactly the one-char-per-byte form we need
      ranks.set(bytes, offset + j - 2);
      if (bytes.length > maxTokenBytes) maxTokenBytes = bytes.length;
    }
  }
  return { pattern: new RegExp(bpe.pat_str, 'gu'), ranks, maxTokenBytes, memo: new Map() };
}

/** UTF-8 bytes of `s` as a one-char-per-byte string; lone surrogates become U+FFFD, as TextEncoder does. */
export function utf8Binary(s: string): string {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) < 0x80) i++;
  if (i === s.length) return s; // ASCII: the string is its own byte string
  const bytes: number[] = [];
  for (let k = 0; k < i; k++) bytes.push(s.charCodeAt(k));
  for (; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) bytes.push(c);
    else if (c < 0x800) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          bytes.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
          i++;
          continue;
        }
        c = 0xfffd;
      }
      bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
  }
  let out = '';
  for (let k = 0; k < bytes.length; k += 8192) out += String.fromCharCode(...bytes.slice(k, k + 8192));
  return out;
}

function rankOf(table: BpeTable, bin: string, start: number, end: number): number {
  if (end - start > table.maxTokenBytes) return Infinity;
  return table.ranks.get(bin.slice(start, end)) ?? Infinity;
}

/**
 * Tokens of one piece by the classic merge loop (tiktoken's): scan for the lowest-ranked adjacent pair,
 * merge it, repeat. Quadratic in the worst case but with cheap steps; used for short pieces.
 */
export function mergeCountSimple(table: BpeTable, bin: string): number {
  const n = bin.length;
  const starts: number[] = []; // part i spans starts[i] .. starts[i + 1]; the last entry is n
  const pair: number[] = []; // pair[i]: rank of merging part i with part i + 1
  for (let i = 0; i <= n; i++) starts.push(i);
  for (let i = 0; i + 1 < n; i++) pair.push(rankOf(table, bin, i, i + 2));
  while (pair.length > 0) {
    let best = 0;
    for (let i = 1; i < pair.length; i++) if (pair[i]! < pair[best]!) best = i;
    if (pair[best] === Infinity) break;
    starts.splice(best + 1, 1);
    pair.splice(best, 1);
    if (best > 0) pair[best - 1] = rankOf(table, bin, starts[best - 1]!, starts[best + 1]!);
    if (best < pair.length) pair[best] = rankOf(table, bin, starts[best]!, starts[best + 2]!);
  }
  return starts.length - 1;
}

/** Heap keys pack (rank, start) so that the smallest key is the lowest rank, leftmost on ties. */
const SCALE = 2 ** 32;

/**
 * Tokens of one piece with a min-heap of candidate pairs and a linked list of parts: O(n log n), for
 * long pieces (a megabyte without a space). Stale heap entries are skipped when popped: an entry is
 * current when its left part still exists and the span of that part and the next still has its rank.
 */
export function mergeCountHeap(table: BpeTable, bin: string): number {
  const n = bin.length;
  const next = new Int32Array(n); // next[i]: start of the part after the part starting at i; -1 if merged away
  const prev = new Int32Array(n);
  const heap: number[] = [];
  const push = (key: number): void => {
    let i = heap.push(key) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]! <= key) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = key;
  };
  const pop = (): number => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= heap.length) break;
        if (child + 1 < heap.length && heap[child + 1]! < heap[child]!) child++;
        if (heap[child]! >= last) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  };
  const offer = (start: number, end: number): void => {
    const rank = rankOf(table, bin, start, end);
    if (rank !== Infinity) push(rank * SCALE + start);
  };
  for (let i = 0; i < n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    if (i + 1 < n) offer(i, i + 2);
  }
  let parts = n;
  while (heap.length > 0) {
    const key = pop();
    const rank = Math.floor(key / SCALE);
    const left = key - rank * SCALE;
    const right = next[left]!;
    if (right === -1 || right >= n) continue;
    const end = next[right]!;
    if (rankOf(table, bin, left, end) !== rank) continue;
    next[left] = end;
    next[right] = -1;
    if (end < n) prev[end] = left;
    parts--;
    if (prev[left]! >= 0) offer(prev[left]!, end);
    if (end < n) offer(left, next[end]!);
  }
  return parts;
}

/** Pieces up to this many bytes use the simple merge loop; longer ones the heap. */
export const HEAP_ABOVE_BYTES = 128;
/** Memo bounds: pieces longer than this are not remembered, and the memo is emptied when full. */
const MEMO_MAX_PIECE = 64;
const MEMO_MAX_ENTRIES = 100_000;

/**
 * Number of tokens of `text`, exactly as tiktoken would encode it with no special tokens allowed:
 * `<|endoftext|>` and the like are split and merged as ordinary text, never an error.
 */
export function countBpeTokens(table: BpeTable, text: string): number {
  const { pattern, ranks, memo } = table;
  pattern.lastIndex = 0;
  let count = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const piece = match[0];
    if (piece === '') {
      pattern.lastIndex++; // cannot happen with tiktoken's patterns; guards against an endless loop
      continue;
    }
    // The memo first, one-token pieces too (they are the public vocabulary): the recent pieces stay
    // in the CPU's caches, where a lookup in the 200,000 ranks (keyed by bytes, made first) mostly
    // misses them. Counting a recalled block in context() took 0.37 ms, 0.15 ms so (BENCHMARKS.md,
    // "The token memo first").
    const cached = memo.get(piece);
    if (cached !== undefined) {
      count += cached;
      continue;
    }
    const bin = utf8Binary(piece);
    const tokens = ranks.has(bin)
      ? 1
      : bin.length > HEAP_ABOVE_BYTES
        ? mergeCountHeap(table, bin)
        : mergeCountSimple(table, bin);
    if (piece.length <= MEMO_MAX_PIECE) {
      if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
      memo.set(piece, tokens);
    }
    count += tokens;
  }
  return count;
}
