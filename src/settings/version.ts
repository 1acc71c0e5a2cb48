/** The package's version, for `--version` and the MCP handshake. */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** The version in the package.json above this file (source and build layouts alike), else `0.0.0`. */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as Record<string, string>;
      if (pkg['name'] === 'durable-memory') return (cached = pkg['version'] ?? '0.0.0');
    } catch {
      // not at this level: try the next one up
    }
  }
  return (cached = '0.0.0');
}
