/**
 * Import rules `npm run lint` enforces (dependency-cruiser). Folders form layers: a folder imports only
 * folders of lower layers (CONTRIBUTING.md lists them), so no two folders can import each other; the
 * workflow bundle imports only deterministic code; the engine no tokenizer; nothing above the stores
 * imports PostgreSQL code; only the command line enters the local stack (src/local-stack/).
 */
// Lowest first. A folder may import its own layer's other folders only where listed in SAME_LAYER_OK.
const LAYERS = [
  ['src/model'],
  // The HTTP API's shapes (TypeBox): low, so the server, the inspector and the CLI all read them.
  ['src/api'],
  ['src/tokenizers', 'src/compaction'],
  ['src/thread', 'src/observability', 'src/recall'],
  ['src/llm', 'src/postgres'],
  ['src/store'],
  ['src/memories', 'src/chat-memory'],
  ['src/erasure', 'src/backends'],
  ['activities'],
  ['workflows'],
  ['src/settings'],
  ['src/client', 'src/worker'],
  ['src/tenancy', 'src/adapters'],
  ['src/ui', 'src/mcp'],
  ['src/server'],
  ['src/local-stack'],
  ['src/cli'],
];

const higher = (i) => LAYERS.slice(i + 1).flat();
const esc = (folder) => folder.replace(/\//g, '\\/');
const layerRules = LAYERS.flatMap((folders, i) =>
  folders.map((folder) => ({
    name: `layers:${folder}`,
    comment: `${folder} may import only folders below it (CONTRIBUTING.md, "Layout")`,
    severity: 'error',
    from: { path: `^${esc(folder)}/` },
    to: {
      path: `^(${[...higher(i), ...folders.filter((f) => f !== folder)].map(esc).join('|')})/`,
    },
  })),
);

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'No import cycles between modules either.',
      severity: 'error',
      from: { path: '^(src|workflows|activities)/' },
      to: { circular: true },
    },
    {
      name: 'workflow-bundle-deterministic',
      comment:
        'Temporal replays workflow code: it imports only workflows/, src/thread, src/compaction, src/model.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        dependencyTypesNot: ['type-only'],
        pathNot:
          '^(workflows|src/thread|src/compaction|src/model)/|(^|/)node_modules/@temporalio/(workflow|common)/',
      },
    },
    {
      name: 'engine-tokenizer-free',
      comment: 'The compaction core takes counted metas; tokenizers are applied at the edges.',
      severity: 'error',
      from: { path: '^src/(compaction|thread|recall)/' },
      to: { path: '^src/tokenizers/|(^|/)node_modules/js-tiktoken/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'local-stack-apart',
      comment:
        'The local stack behind `npm start` (dev server, embedded PostgreSQL, supervision, ports, orphans) ' +
        'is for the command line alone: the library, the worker, the HTTP API and the workflows never import it.',
      severity: 'error',
      from: { path: '^(src|workflows|activities)/', pathNot: '^src/(local-stack|cli)/' },
      to: { path: '^src/local-stack/' },
    },
    {
      name: 'inspector-browser-modules',
      comment:
        'The browser loads the inspector modules one by one (src/ui/route.ts): beyond each other they ' +
        'import types only (the API shapes of src/api/), which compile away.',
      severity: 'error',
      from: { path: '^src/ui/', pathNot: '^src/ui/(route|page)[.]ts$' },
      to: { pathNot: '^src/ui/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-postgres-above-stores',
      comment: 'Above the store interfaces nothing imports PostgreSQL code: use ThreadStore/MemoryStore.',
      severity: 'error',
      from: {
        path: '^(src/(api|client|server|cli|tenancy|adapters|mcp|settings|thread|compaction|recall|erasure|llm|ui)|workflows|activities)/',
        // The token store is a store of its own (API tokens in PostgreSQL), on the shared plumbing.
        pathNot: '^src/tenancy/token-store[.]ts$',
      },
      to: { path: '(^|/)node_modules/pg/|^src/postgres/|^src/store/postgres/|^src/memories/postgres' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|test|bench|examples)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
