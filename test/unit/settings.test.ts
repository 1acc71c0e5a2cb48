/**
 * The settings resolver, without servers: precedence (flag or option, then environment, then
 * endpoints.json, then default), blank values counting as unset at every level, the origin each
 * value keeps, validation, and redaction of secrets in everything printed.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { endpointsPath, type Endpoints } from '../../src/settings/endpoints.js';
import { BackendUnavailableError, reasonOf, SettingError } from '../../src/settings/errors.js';
import { describeOrigin } from '../../src/settings/origin.js';
import { redactUrl } from '../../src/settings/redact.js';
import {
  loadSettings,
  resolveSettings,
  whereLooked,
  type GivenSettings,
  type SettingKey,
} from '../../src/settings/settings.js';

const FILE: Endpoints = {
  temporalAddress: 'file-host:7000',
  namespace: 'file-ns',
  taskQueue: 'file-queue',
  databaseUrl: 'postgres://file:pw@file-db:5000/app',
};
const CWD = '/work/project';
const HOME = path.join(CWD, '.durable-memory');

interface Case {
  name: string;
  given?: GivenSettings;
  givenAs?: 'flag' | 'option';
  env?: NodeJS.ProcessEnv;
  file?: Endpoints;
  key: SettingKey;
  /** Expected value and origin (`describeOrigin` of it); undefined value: not set. */
  value: string | undefined;
  from?: string;
}

const cases: Case[] = [
  // Precedence, for each level.
  {
    name: 'a flag beats the environment and the file',
    given: { temporalAddress: 'flag-host:1' },
    givenAs: 'flag',
    env: { TEMPORAL_ADDRESS: 'env-host:2' },
    file: FILE,
    key: 'temporalAddress',
    value: 'flag-host:1',
    from: 'from --temporal-address',
  },
  {
    name: 'an option is named as connect()’s',
    given: { databaseUrl: 'postgres://o@opt/db' },
    env: { DATABASE_URL: 'postgres://e@env/db' },
    key: 'databaseUrl',
    value: 'postgres://o@opt/db',
    from: 'from connect({ databaseUrl })',
  },
  {
    name: 'the environment beats the file',
    env: { TEMPORAL_NAMESPACE: 'env-ns' },
    file: FILE,
    key: 'namespace',
    value: 'env-ns',
    from: 'from TEMPORAL_NAMESPACE',
  },
  {
    name: 'the file beats the default',
    file: FILE,
    key: 'taskQueue',
    value: 'file-queue',
    from: `from "taskQueue" in ${endpointsPath(HOME)}`,
  },
  {
    name: 'the default when nothing is set',
    key: 'temporalAddress',
    value: 'localhost:7233',
    from: 'the default: none of connect({ temporalAddress }), TEMPORAL_ADDRESS, endpoints.json is set',
  },
  { name: 'the task queue’s default', key: 'taskQueue', value: 'durable-memory' },
  { name: 'the namespace’s default', key: 'namespace', value: 'default' },
  { name: 'no database has no default', key: 'databaseUrl', value: undefined },
  // Blank values count as unset, at every level, and values are trimmed.
  {
    name: 'a blank flag falls through to the environment',
    given: { taskQueue: '  ' },
    givenAs: 'flag',
    env: { DURABLE_MEMORY_TASK_QUEUE: 'env-queue' },
    key: 'taskQueue',
    value: 'env-queue',
    from: 'from DURABLE_MEMORY_TASK_QUEUE',
  },
  {
    name: 'an empty variable falls through to the file',
    env: { TEMPORAL_ADDRESS: '' },
    file: FILE,
    key: 'temporalAddress',
    value: 'file-host:7000',
  },
  {
    name: 'a blank variable falls through to the default',
    env: { TEMPORAL_NAMESPACE: ' \t' },
    key: 'namespace',
    value: 'default',
  },
  {
    name: 'an empty DATABASE_URL is no database',
    env: { DATABASE_URL: '' },
    key: 'databaseUrl',
    value: undefined,
  },
  {
    name: 'an empty field in the file falls through to the default',
    file: { ...FILE, namespace: '' },
    key: 'namespace',
    value: 'default',
  },
  {
    name: 'values are trimmed',
    env: { TEMPORAL_ADDRESS: ' host:9 ' },
    key: 'temporalAddress',
    value: 'host:9',
  },
  // The home: flag, variable, default; relative to the working directory.
  {
    name: 'the home from --home, resolved against the working directory',
    given: { home: 'elsewhere' },
    givenAs: 'flag',
    env: { DURABLE_MEMORY_HOME: '/env/home' },
    key: 'home',
    value: path.join(CWD, 'elsewhere'),
    from: 'from --home',
  },
  {
    name: 'a blank DURABLE_MEMORY_HOME is the default home',
    env: { DURABLE_MEMORY_HOME: ' ' },
    key: 'home',
    value: HOME,
  },
];

describe('resolveSettings: precedence and blank values', () => {
  for (const c of cases) {
    test(c.name, () => {
      const settings = resolveSettings(
        { given: c.given, givenAs: c.givenAs, env: c.env ?? {}, cwd: CWD },
        c.file,
      );
      const setting = settings[c.key];
      assert.equal(setting?.value, c.value);
      if (c.from) assert.equal(describeOrigin(setting!.origin), c.from);
    });
  }

  test('a database URL is shown without its password, wherever it came from', () => {
    const settings = resolveSettings({ env: {}, cwd: CWD }, FILE);
    assert.equal(settings.databaseUrl?.value, FILE.databaseUrl);
    assert.equal(settings.databaseUrl?.shown, 'postgres://file:***@file-db:5000/app');
  });

  test('where a missing database was looked for names the flag, the variable and the file', () => {
    const settings = resolveSettings({ env: {}, cwd: CWD, givenAs: 'flag' }, undefined);
    assert.equal(
      whereLooked(settings, 'databaseUrl'),
      `no --database-url, no DATABASE_URL and no endpoints.json at ${endpointsPath(HOME)} ` +
        '(the home, the default: none of --home, DURABLE_MEMORY_HOME is set)',
    );
  });

  test('loadSettings reads endpoints.json of the resolved home', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'dm-settings-'));
    try {
      await writeFile(endpointsPath(home), JSON.stringify(FILE));
      const settings = await loadSettings({ env: { DURABLE_MEMORY_HOME: home } });
      assert.equal(settings.temporalAddress.value, FILE.temporalAddress);
      assert.equal(settings.temporalAddress.origin.kind, 'file');
      assert.equal(settings.home.origin.kind, 'env');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('resolveSettings: values that cannot work', () => {
  const invalid: [NodeJS.ProcessEnv, RegExp][] = [
    [
      { DATABASE_URL: 'notaurl' },
      /^DATABASE_URL is not a PostgreSQL URL: "notaurl"; give one like postgres:/u,
    ],
    [{ DATABASE_URL: 'http://db:5432/app' }, /^DATABASE_URL is not a PostgreSQL URL/u],
    // No scheme: the password must not appear in the message.
    [
      { DATABASE_URL: 'app:s3cret@db:5432/app' },
      /^DATABASE_URL is not a PostgreSQL URL: "app:\*\*\*@db:5432\/app"/u,
    ],
    [{ TEMPORAL_ADDRESS: 'http://localhost:7233' }, /^TEMPORAL_ADDRESS is not a host:port address/u],
  ];
  for (const [env, message] of invalid) {
    test(`${JSON.stringify(env)} is refused with the setting named`, () => {
      assert.throws(
        () => resolveSettings({ env }, undefined),
        (err: unknown) =>
          err instanceof SettingError && message.test(err.message) && !/s3cret/u.test(err.message),
      );
    });
  }

  test('PostgreSQL URLs of every accepted form pass', () => {
    for (const url of [
      'postgres://h/db',
      'postgresql://u:p@h:1/db?sslmode=require',
      'socket:/run/pg',
      '/run/pg',
    ])
      assert.equal(resolveSettings({ env: { DATABASE_URL: url } }, undefined).databaseUrl?.value, url);
  });
});

describe('redactUrl: one redaction for logs, errors and ready lines', () => {
  const table: [string, string][] = [
    ['postgres://app:s3cret@db:5432/app', 'postgres://app:***@db:5432/app'],
    ['postgres://app@db/app', 'postgres://app@db/app'],
    ['postgres://u@h/db?password=s3cret&sslmode=require', 'postgres://u@h/db?password=***&sslmode=require'],
    ['postgresql://a:b:c@h/db', 'postgresql://a:***@h/db'],
    ['notaurl', 'notaurl'],
    ['app:s3cret@db:5432/app', 'app:***@db:5432/app'],
    ['host=db password=s3cret dbname=app', 'host=db password=*** dbname=app'],
  ];
  for (const [input, shown] of table) test(input, () => assert.equal(redactUrl(input), shown));
});

describe('BackendUnavailableError: one line that names the setting, its origin and what to do', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5999'), { code: 'ECONNREFUSED' });

  test('from an environment variable', () => {
    const err = new BackendUnavailableError('postgres', 'postgres://u:***@127.0.0.1:5999/db', refused, {
      origin: { kind: 'env', name: 'DATABASE_URL' },
    });
    assert.equal(
      err.message,
      'cannot reach PostgreSQL at postgres://u:***@127.0.0.1:5999/db (from DATABASE_URL): connection refused ' +
        '(nothing listens there); start PostgreSQL there, or unset DATABASE_URL to use the local stack ' +
        'that `npm start` (or `durable-memory start`) runs',
    );
    assert.doesNotMatch(err.message, /\n/u);
  });

  test('from endpoints.json: the local stack is not running', () => {
    const err = new BackendUnavailableError('temporal', '127.0.0.1:7233', refused, {
      origin: { kind: 'file', name: 'temporalAddress', file: '/h/endpoints.json' },
    });
    assert.match(err.message, /\(from "temporalAddress" in \/h\/endpoints\.json\)/u);
    assert.match(err.message, /the local stack that wrote it is not running: start it with `npm start`/u);
  });

  test('the reason of a raw Temporal transport error is said plainly', () => {
    const tonic = new Error(
      'tonic::transport::Error(Transport, ConnectError(ConnectError("tcp connect error", Os { code: 111, ' +
        'kind: ConnectionRefused, message: "Connection refused" })))',
    );
    assert.equal(reasonOf(tonic), 'connection refused (nothing listens there)');
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND base'), {
      code: 'ENOTFOUND',
      hostname: 'base',
    });
    assert.equal(reasonOf(dns), 'unknown host "base"');
    const auth = Object.assign(new Error('password authentication failed for user "u"'), { code: '28P01' });
    assert.equal(reasonOf(new AggregateError([auth])), 'password authentication failed for user "u"');
  });
});
