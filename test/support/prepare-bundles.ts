/**
 * Builds (or finds cached) the workflow bundles of these sources, plain and traced, into the cache
 * that workflow-bundle.ts's sourceBundle reads. `npm test` runs it beside the static checks: on a
 * fresh clone each is a webpack run of about 10 s of CPU that the integration run would otherwise
 * make before its first file (the plain one) or inside a test file (the traced one, which
 * replay.test.ts and tracing.test.ts use), while the static checks leave a core idle at their end.
 */
import { sourceBundle } from '../../src/worker/workflow-bundle.js';

const started = Date.now();
const [plain, traced] = await Promise.all([sourceBundle(false), sourceBundle(true)]);
console.log(
  `workflow bundles: ${Math.round(plain.length / 1024)} KiB, traced ${Math.round(traced.length / 1024)} KiB (${Date.now() - started} ms)`,
);
