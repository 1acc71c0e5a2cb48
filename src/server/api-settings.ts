/**
 * The HTTP API's settings from the environment (address, port, log level, bootstrap token), each
 * checked without loading the API: `npm start`, `durable-memory start` and `durable-memory api` refuse
 * a bad value before they load the servers and their packages (about 2 s of CPU that a refused start
 * paid for nothing), let alone start or connect to anything. See serve.ts for what they mean.
 */
import { createServer } from 'node:net';
import { ValidationError } from '../model/errors.js';
import { SettingError } from '../settings/errors.js';
import { readEnv } from '../settings/settings.js';
import { workflowTaskTimeoutMs } from '../settings/workflow-tasks.js';
import { isTokenShaped, TOKEN_SHAPE_WORDS } from '../tenancy/token-store.js';
import { TENANT_PATTERN } from '../tenancy/tenant-scope.js';

/** The API's default port (as in the Dockerfile and docker-compose.yml). */
export const DEFAULT_API_PORT = 8080;

/** Tenant of the bootstrap token when DURABLE_MEMORY_API_TENANT is not set. */
export const DEFAULT_BOOTSTRAP_TENANT = 'default';

/** How to make a token, said after every refusal of DURABLE_MEMORY_API_TOKEN. */
export const MAKE_TOKEN = `Make one with node -e "console.log('dm_' + require('crypto').randomBytes(32).toString('base64url'))"`;

/**
 * The bootstrap token of `env` and its tenant, if a token is set, each checked without a database:
 * callers check it before they start anything. The token's value itself is never repeated.
 * @throws ValidationError naming DURABLE_MEMORY_API_TOKEN or DURABLE_MEMORY_API_TENANT
 */
export function bootstrapToken(env: NodeJS.ProcessEnv): { token: string; tenant: string } | undefined {
  const token = readEnv(env, 'DURABLE_MEMORY_API_TOKEN');
  if (!token) return undefined;
  if (!isTokenShaped(token))
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_API_TOKEN: expected ${TOKEN_SHAPE_WORDS}. ${MAKE_TOKEN}`,
      { field: 'DURABLE_MEMORY_API_TOKEN' },
    );
  const tenant = readEnv(env, 'DURABLE_MEMORY_API_TENANT') ?? DEFAULT_BOOTSTRAP_TENANT;
  if (!TENANT_PATTERN.test(tenant))
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_API_TENANT: expected 1–40 of a-z, 0-9 and -, got ${JSON.stringify(tenant)}`,
      { field: 'DURABLE_MEMORY_API_TENANT' },
    );
  return { token, tenant };
}

/**
 * Checks every setting the API reads from `env` (address, port, log level, bootstrap token, and the
 * workflow task timeout its client starts threads with), so that `npm start` and `durable-memory api`
 * refuse a bad one before they start or connect to anything (CLI exit 2), not after the stack came up.
 * `hostName`: what to call the address in a refusal (a flag that set it).
 * @throws ValidationError naming the variable
 */
export async function checkApiEnvironment(env: NodeJS.ProcessEnv, hostName?: string): Promise<void> {
  configuredApiPort(env);
  apiLogLevel(env);
  bootstrapToken(env);
  workflowTaskTimeoutMs(undefined, env);
  await checkApiHost(apiHost(env), hostName);
}

/**
 * Whether the API can listen on `host` at all (a port the system picks, released at once): a host
 * name that does not resolve, or an address of another machine, is refused naming `name`.
 * @throws ValidationError naming `name`
 */
export async function checkApiHost(host: string, name = 'DURABLE_MEMORY_API_HOST'): Promise<void> {
  const failure = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', resolve);
    server.listen({ port: 0, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
  if (!failure) return;
  const why =
    failure.code === 'ENOTFOUND' || failure.code === 'EAI_AGAIN'
      ? 'no such host'
      : failure.code === 'EADDRNOTAVAIL'
        ? 'not an address of this machine'
        : failure.message;
  throw new ValidationError(
    'invalid_option',
    `${name}: cannot listen on ${JSON.stringify(host)}: ${why}; give an address of this machine ` +
      '(127.0.0.1: loopback only; 0.0.0.0: every interface) or unset it',
    { field: name },
  );
}

/** The port DURABLE_MEMORY_API_PORT asks for, if any. */
export function configuredApiPort(env: NodeJS.ProcessEnv): number | undefined {
  const raw = readEnv(env, 'DURABLE_MEMORY_API_PORT');
  if (!raw) return undefined;
  const port = Number(raw);
  if (!/^\d+$/u.test(raw) || port > 65_535)
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_API_PORT: expected a port number (0–65535), got ${JSON.stringify(raw)}`,
      { field: 'DURABLE_MEMORY_API_PORT' },
    );
  return port;
}

/** The levels DURABLE_MEMORY_API_LOG_LEVEL may name (pino's). */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The request log's level DURABLE_MEMORY_API_LOG_LEVEL asks for, else `info`.
 * @throws ValidationError naming the variable and the levels, for any other value
 */
export function apiLogLevel(env: NodeJS.ProcessEnv): string {
  const level = readEnv(env, 'DURABLE_MEMORY_API_LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_API_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got "${level}"`,
      { field: 'DURABLE_MEMORY_API_LOG_LEVEL' },
    );
  return level;
}

/** The interface DURABLE_MEMORY_API_HOST asks for, else loopback. */
export function apiHost(env: NodeJS.ProcessEnv): string {
  return readEnv(env, 'DURABLE_MEMORY_API_HOST') ?? '127.0.0.1';
}

/**
 * The error of an API port something else listens on, naming the setting that asked for it
 * (`DURABLE_MEMORY_API_PORT`, or the `--port` flag). Callers check the port before they start
 * anything, so that a busy port is said at once rather than after the whole stack has started.
 */
export function apiPortInUse(port: number, host: string, name = 'DURABLE_MEMORY_API_PORT'): SettingError {
  const origin = name.startsWith('--') ? { kind: 'flag' as const, name } : { kind: 'env' as const, name };
  return new SettingError(
    'apiPort',
    { value: String(port), shown: String(port), origin },
    `asks for a port in use on ${host}`,
    `stop what listens there or choose another port (unset, the API takes ${DEFAULT_API_PORT} if free, ` +
      'else any free port)',
  );
}
