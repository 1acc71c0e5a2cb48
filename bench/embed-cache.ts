/**
 * Bench only: an embedder that remembers the real model's answers between runs, in a JSON-lines file
 * under ~/.cache/durable-memory-bench/ keyed by model and text (sha256). The embed server takes
 * 60-120 sentences/s on these machines, so a dev-set run re-embedded the same turns for ~20 minutes;
 * with the cache, a second run embeds only what is new. Vectors are the server's, unchanged.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '../src/llm/embeddings.js';

const DIR = join(homedir(), '.cache', 'durable-memory-bench');

/** `inner` with its answers cached on disk (one file per model). */
export function cachedEmbedder(inner: Embedder): Embedder {
  mkdirSync(DIR, { recursive: true });
  const file = join(DIR, `embeddings-${inner.model.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`);
  const cache = new Map<string, number[]>();
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const { k, v } = JSON.parse(line) as { k: string; v: number[] };
        cache.set(k, v);
      } catch {
        // a line cut short by a killed run: ignore it
      }
    }
  }
  const keyOf = (text: string) => createHash('sha256').update(`${inner.model}\u0000${text}`).digest('hex');
  return {
    model: inner.model,
    label: `${inner.label} (cached in ${file})`,
    async embed(texts, signal) {
      const keys = texts.map(keyOf);
      const missing = [...new Set(texts.filter((_, i) => !cache.has(keys[i]!)))];
      if (missing.length > 0) {
        const vectors = await inner.embed(missing, signal);
        const lines: string[] = [];
        missing.forEach((text, i) => {
          const k = keyOf(text);
          cache.set(k, vectors[i]!);
          lines.push(JSON.stringify({ k, v: vectors[i] }));
        });
        appendFileSync(file, lines.join('\n') + '\n');
      }
      return keys.map((k) => cache.get(k)!);
    },
  };
}
