/**
 * Serves the thread inspector: the HTML shell at `/ui`, its stylesheet, and its browser modules at
 * `/ui/<name>.js`. The modules are read from the directory of this file at runtime: in `dist/` they
 * are tsc's output and are served as they are; when the server runs from source (tsx), the `.ts`
 * files next to this one are compiled on the fly with TypeScript's `transpileModule` (a dev
 * dependency, only loaded in that mode). The page needs no token to load; everything it shows comes
 * from the `/v1` API with the person's token, so these routes serve no data.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { INSPECTOR_CSS, inspectorHtml } from './page.js';

/** Options of {@link registerInspector}. */
export interface InspectorOptions {
  /** Where the page is served (default `/ui`). */
  prefix?: string;
  /** Where the page finds the HTTP API, same origin (default `/v1`). */
  apiBase?: string;
  /** Directory the browser modules are read from (default: this file's; tests point it elsewhere). */
  dir?: string;
}

/**
 * The modules the browser may load: the page's own, nothing else from the directory (this file and
 * `page` are server-side). Adding a browser module means adding it here.
 */
export const BROWSER_MODULES: ReadonlySet<string> = new Set([
  'app',
  'api',
  'dom',
  'view-model',
  'budget-model',
  'memories-model',
  'service-model',
  'render-thread',
  'render-memories',
]);

/**
 * The page runs only its own files: scripts and styles from this origin, no inline code, no plugins,
 * no framing, and fetches only to this origin. Message contents are rendered as text, but if markup
 * ever slipped through it could not run script that reads the token.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:", // data: only for the empty favicon (no request, no 404)
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** An error answer in the API's format (`{ error: { code, message } }`, see src/server/api-error.ts). */
function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

function send(reply: FastifyReply, type: string, body: string): FastifyReply {
  return reply
    .header('content-type', `${type}; charset=utf-8`)
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache') // small files; a new build must show up on reload
    .send(body);
}

type Transpile = (source: string, fileName: string) => Promise<string>;

/** TypeScript's single-file transpiler, loaded on first use (it is not installed in production). */
const transpile: Transpile = async (source, fileName) => {
  const ts = (await import('typescript')).default;
  return ts.transpileModule(source, {
    fileName,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, sourceMap: false },
  }).outputText;
};

/** Reads a browser module's JavaScript: tsc's output in `dist/`, the `.ts` compiled in source mode. */
export function moduleLoader(dir: string, fromSource: boolean): (name: string) => Promise<string> {
  const cache = new Map<string, Promise<string>>();
  const load = async (name: string) => {
    if (!fromSource) return readFile(path.join(dir, `${name}.js`), 'utf8');
    const file = path.join(dir, `${name}.ts`);
    return transpile(await readFile(file, 'utf8'), file);
  };
  return (name) => {
    if (fromSource) return load(name); // dev: edits show up on reload
    let text = cache.get(name);
    if (!text) {
      text = load(name);
      text.catch(() => cache.delete(name)); // a failed read is retried next time
      cache.set(name, text);
    }
    return text;
  };
}

/**
 * Registers `GET <prefix>` (the page), `GET <prefix>/inspector.css` and `GET <prefix>/<module>.js`
 * on `app`. Call it before `app.listen()`/`app.ready()`, beside the `/v1` routes.
 */
export function registerInspector(app: FastifyInstance, options: InspectorOptions = {}): void {
  const prefix = (options.prefix ?? '/ui').replace(/\/+$/u, '');
  const here = fileURLToPath(import.meta.url);
  const dir = options.dir ?? path.dirname(here);
  const load = moduleLoader(dir, here.endsWith('.ts'));
  const html = inspectorHtml(prefix, options.apiBase ?? '/v1');

  // Hidden from the OpenAPI description (@fastify/swagger reads `hide`): the page is not API.
  const hidden = { schema: { hide: true } };
  app.get(prefix, hidden, (_req, reply) => send(reply, 'text/html', html));
  app.get(`${prefix}/`, hidden, (_req, reply) => reply.redirect(prefix));
  app.get(`${prefix}/inspector.css`, hidden, (_req, reply) => send(reply, 'text/css', INSPECTOR_CSS));
  app.get<{ Params: { file: string } }>(`${prefix}/:file`, hidden, async (req, reply) => {
    const name = /^([a-z][a-z-]*)\.js$/u.exec(req.params.file)?.[1];
    if (!name || !BROWSER_MODULES.has(name)) {
      return reply.code(404).send(errorBody('not_found', `no such inspector file: ${req.params.file}`));
    }
    try {
      return send(reply, 'text/javascript', await load(name));
    } catch (err) {
      // Name and message only: a stack trace (or a file system path in one) stays out of the log.
      const e = err as { name?: unknown; message?: unknown };
      const error = {
        type: typeof e?.name === 'string' ? e.name : typeof err,
        message: typeof e?.message === 'string' ? e.message.slice(0, 300) : String(err),
      };
      req.log.error({ error, module: name }, 'inspector module unavailable');
      return reply.code(500).send(errorBody('inspector_unavailable', `could not load ${name}.js`));
    }
  });
}
