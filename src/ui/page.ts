/**
 * The inspector's HTML shell and stylesheet, as strings: `tsc` compiles TypeScript but copies no
 * `.html` or `.css` files, so keeping them here puts them in `dist/` with everything else. The shell
 * holds no data; `app.js` fills `<main>` through the API once it has a token.
 */

/** The stylesheet, served at `<prefix>/inspector.css` (a file, so the CSP needs no inline styles). */
export const INSPECTOR_CSS = `
:root { --system:#6b7280; --summaries:#7c3aed; --memories:#0d9488; --recalled:#ca8a04; --working:#be185d; --recent:#2563eb; --free:#e5e7eb;
  --excluded:#fef3c7; --border:#d1d5db; --muted:#4b5563; color-scheme: light; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #111827; background: #f9fafb; }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; justify-content: space-between;
  padding: .75rem 1.25rem; background: #111827; color: #f9fafb; }
header h1 { font-size: 1.1rem; margin: 0; }
header form { display: flex; gap: .5rem; align-items: center; }
header input { padding: .3rem .5rem; min-width: 16rem; }
main { padding: 1rem 1.25rem 3rem; }
button { font: inherit; padding: .3rem .8rem; border: 1px solid #9ca3af; border-radius: 4px; background: #fff;
  cursor: pointer; }
button.primary { background: #1d4ed8; border-color: #1d4ed8; color: #fff; }
button:disabled { opacity: .6; cursor: progress; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
#status { margin: 0; padding: .4rem 1.25rem; min-height: 2rem; background: #eef2ff; }
#status.error { background: #fee2e2; color: #991b1b; }
table { border-collapse: collapse; background: #fff; }
caption { text-align: left; color: var(--muted); padding: 0 0 .35rem; background: #f9fafb; }
th, td { text-align: left; padding: .35rem .75rem; border-bottom: 1px solid var(--border); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.facts { display: flex; flex-wrap: wrap; gap: .25rem 1.5rem; margin: .25rem 0 .75rem; padding: 0;
  list-style: none; color: var(--muted); }
.facts b { color: #111827; font-weight: 600; }
.actions { display: flex; gap: .5rem; margin: .5rem 0 1rem; }
.fork { display: flex; flex-wrap: wrap; align-items: center; gap: .35rem .5rem; margin: 0 0 1rem; }
.bar { display: flex; position: relative; height: 1.6rem; border: 1px solid #9ca3af; background: var(--free);
  border-radius: 3px; overflow: hidden; }
.bar span { display: block; height: 100%; }
.bar .budget-line { position: absolute; top: 0; bottom: 0; width: 2px; background: #b91c1c; }
.seg-system { background: var(--system); } .seg-summaries { background: var(--summaries); }
.seg-memories { background: var(--memories); } .seg-recent { background: var(--recent); }
.seg-recalled { background: var(--recalled); } .seg-working { background: var(--working); }
.seg-free { background: var(--free); border: 1px solid #9ca3af; }
.legend { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; padding: 0; list-style: none; }
.legend i { display: inline-block; width: .9rem; height: .9rem; margin-right: .35rem; vertical-align: -2px;
  border-radius: 2px; }
.columns { display: grid; grid-template-columns: 1fr 1fr; gap: 1.25rem; align-items: start; }
@media (max-width: 900px) { .columns { grid-template-columns: 1fr; } }
.column { min-width: 0; }
.block { background: #fff; border: 1px solid var(--border); border-left: 4px solid var(--recent);
  border-radius: 4px; margin: 0 0 .5rem; padding: .4rem .6rem; }
.block.kind-tool_call { border-left-color: #ea580c; }
.block.kind-system { border-left-color: var(--system); }
.block.kind-summary { border-left-color: var(--summaries); background: #f5f3ff; }
.block.kind-memories { border-left-color: var(--memories); background: #f0fdfa; }
.block.kind-recalled { border-left-color: var(--recalled); background: #fefce8; }
.block.kind-working_memory { border-left-color: var(--working); background: #fdf2f8; }
.recalled-why { margin: .1rem 0 .35rem; padding-left: 1.1rem; font-size: .88rem; color: #854d0e; }
.block.excluded { background: var(--excluded); border-left-color: #d97706; }
.block.excluded .msg-text { color: var(--muted); }
.block h4 { margin: 0 0 .2rem; font-size: .8rem; text-transform: uppercase; letter-spacing: .03em;
  color: var(--muted); }
.exclusion { margin: .1rem 0 .35rem; font-size: .88rem; color: #92400e; overflow-wrap: anywhere; }
.exclusion strong { color: #78350f; }
.msg { padding: .15rem 0; }
.msg + .msg { border-top: 1px dashed var(--border); }
.msg-meta { font-size: .78rem; color: var(--muted); }
.msg-text { margin: .1rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; font: inherit; }
.replaced { margin: .4rem 0 0; padding: .4rem .6rem; background: #fff; border: 1px solid var(--border); }
.memory { background: #fff; border: 1px solid var(--border); border-radius: 4px; padding: .4rem .6rem;
  margin: 0 0 .5rem; }
.memory .provenance, .memory .previous { font-size: .85rem; color: var(--muted); }
.memory .previous { margin: .3rem 0 0; padding-left: 1.1rem; }
.memory del { color: #6b7280; }
.badge { display: inline-block; font-size: .75rem; padding: 0 .4rem; border-radius: 999px; background: #ccfbf1;
  color: #115e59; margin-left: .4rem; }
.badge.superseded { background: #fde68a; color: #78350f; }
a { color: #1d4ed8; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: 0 0 .75rem; }
.filters input { padding: .3rem .5rem; }
.pages { display: flex; gap: 1.5rem; margin: .75rem 0 0; }
table.threads td { overflow-wrap: anywhere; }
.not-found { background: #fff; border: 1px solid var(--border); border-left: 4px solid #b91c1c;
  border-radius: 4px; padding: .5rem 1rem; max-width: 40rem; }
.not-found code { overflow-wrap: anywhere; }
`;

/** Escapes text for an HTML attribute or element (the prefix is configuration, never user input). */
function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/gu,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** The page served at `prefix` (e.g. `/ui`); its module and stylesheet load from under it. */
export function inspectorHtml(prefix: string, apiBase = '/v1'): string {
  const p = escapeHtml(prefix);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Thread inspector · durable-memory</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${p}/inspector.css">
<script type="module" src="${p}/app.js"></script>
</head>
<body data-api="${escapeHtml(apiBase)}">
<header>
  <h1>durable-memory · thread inspector</h1>
  <form id="token-form" autocomplete="off">
    <label for="token">API token</label>
    <input id="token" name="token" type="password" spellcheck="false" placeholder="bearer token">
    <button type="submit">Use token</button>
    <button type="button" id="forget-token">Forget token</button>
  </form>
</header>
<p id="status" role="status" aria-live="polite"></p>
<main id="main" tabindex="-1"><noscript>The inspector needs JavaScript.</noscript></main>
</body>
</html>
`;
}
