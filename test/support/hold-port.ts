/**
 * Holds embedded PostgreSQL's default port while a test's stack starts, so that it takes a port no
 * other test file's start prefers (those take 5433 when free, and could take it back between a test's
 * two starts). A port someone else holds already is as good.
 */
import { createServer } from 'node:net';
import { DEFAULT_POSTGRES_PORT } from '../../src/local-stack/embedded-stack.js';

/** Listens on 127.0.0.1:5433 if it can; the answer lets it go. */
export async function holdDefaultPostgresPort(): Promise<() => void> {
  const held = createServer();
  await new Promise<void>((resolve) => {
    held.once('error', () => resolve()); // in use already: held by someone else, as good
    held.listen({ port: DEFAULT_POSTGRES_PORT, host: '127.0.0.1' }, () => resolve());
  });
  return () => {
    if (held.listening) held.close();
  };
}
