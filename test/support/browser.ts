/**
 * A real browser for UI tests: Debian's Chromium driven by `playwright-core` (which ships no browser).
 * When `/usr/bin/chromium` is absent it is installed with apt first, so a fresh machine needs nothing
 * done by hand; each launch gets a fresh user-data directory, removed on close, so runs never share
 * cookies or storage.
 */
import { execFile } from 'node:child_process';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext } from 'playwright-core';

const run = promisify(execFile);

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Flags for a quiet, hermetic headless run: no sandbox (containers run as root, where Chromium's
 * sandbox refuses to start), no GPU, and none of the background traffic (updates, sync, QUIC probes)
 * that would make a test depend on the network.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

let installing: Promise<void> | undefined;

/**
 * Installs Debian's Chromium with apt when {@link CHROMIUM_PATH} is absent (once per process). The
 * package index is refreshed first because slim images ship without one. Needs root, as apt does;
 * the error says what to run otherwise.
 */
export function ensureChromium(log: (line: string) => void = console.error): Promise<void> {
  installing ??= (async () => {
    if (await exists(CHROMIUM_PATH)) return;
    log(`${CHROMIUM_PATH} is absent: installing Debian's chromium with apt (once)`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      await run('apt-get', ['update'], { env, maxBuffer: 64 << 20 });
      await run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
        env,
        maxBuffer: 64 << 20,
      });
    } catch (err) {
      throw new Error(
        `could not install chromium with apt (run \`apt-get update && apt-get install -y chromium\` ` +
          `as root): ${(err as Error).message}`,
      );
    }
    if (!(await exists(CHROMIUM_PATH)))
      throw new Error(`apt installed chromium but ${CHROMIUM_PATH} is absent`);
  })();
  return installing;
}

/** A launched browser: one context on a fresh profile. */
export interface TestBrowser {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** Launches headless Chromium (installing it first if needed) on a fresh user-data directory. */
export async function launchBrowser(): Promise<TestBrowser> {
  await ensureChromium();
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'dm-chromium-'));
  // A persistent context is how Playwright takes a user-data directory (`--user-data-dir` in args is
  // refused); the directory is ours and fresh, so nothing persists between runs.
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 1000 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
