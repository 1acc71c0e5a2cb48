/**
 * What the examples share: where the HTTP API of the local stack is, and the one-line refusal of an
 * example that needs a chat model when none is configured.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The HTTP API's base URL: DURABLE_MEMORY_API_URL, else the `apiUrl` that `npm start` wrote to
 * `endpoints.json` under DURABLE_MEMORY_HOME (default `./.durable-memory`), as `connect()` finds the
 * stack. Never an assumed port: 8080 is only the API's port when it was free. Exits 1 with one line
 * saying what to do when there is neither.
 */
export function apiUrl(): string {
  const given = process.env['DURABLE_MEMORY_API_URL']?.trim();
  if (given) return given.replace(/\/$/u, '');
  const file = path.resolve(
    process.env['DURABLE_MEMORY_HOME']?.trim() || '.durable-memory',
    'endpoints.json',
  );
  let url: unknown;
  try {
    url = (JSON.parse(readFileSync(file, 'utf8')) as { apiUrl?: unknown }).apiUrl;
  } catch {
    url = undefined;
  }
  if (typeof url === 'string' && url) return url.replace(/\/$/u, '');
  console.error(
    `no DURABLE_MEMORY_API_URL and no apiUrl in ${file}: start the stack (npm start) in this ` +
      'directory, or set DURABLE_MEMORY_HOME to its home or DURABLE_MEMORY_API_URL to its API',
  );
  process.exit(1);
}

/**
 * Stops an example that needs a chat model when none is configured: one line on stderr saying which
 * settings it needs, exit code 1, nothing appended.
 */
export function requireChatModel(example: string): void {
  if (process.env['OPENAI_BASE_URL'] || process.env['OPENAI_API_KEY']) return;
  console.error(
    `${example} needs a chat model: set OPENAI_BASE_URL to an OpenAI-compatible endpoint ` +
      '(e.g. a local Ollama: OPENAI_BASE_URL=http://localhost:11434/v1 AGENT_MODEL=llama3.2), ' +
      'or OPENAI_API_KEY to use OpenAI itself.',
  );
  process.exit(1);
}
