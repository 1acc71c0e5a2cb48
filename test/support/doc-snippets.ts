/**
 * The code blocks of the README and of docs/*.md, as the docs test runs them: which block is code to
 * run (sh, bash, ts, python), which one says why it cannot run (`<!-- not run: reason -->` on the
 * last non-blank line before its fence), and what its output must show (`<!-- output: regex -->`,
 * the same place).
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from './processes.js';

/** How a block is run. */
export type SnippetKind = 'shell' | 'ts' | 'python';

/** One fenced block of a page. */
export interface Snippet {
  /** The page, relative to the repository (`README.md`, `docs/mcp.md`). */
  file: string;
  /** Line of its opening fence (1-based). */
  line: number;
  /** The fence's language, as written. */
  lang: string;
  /** How it is run; undefined for blocks that are not code to run (json, yaml, plain text). */
  kind?: SnippetKind;
  /** Its text, without the fences. */
  code: string;
  /** Why it is not run, when the page says so. */
  notRun?: string;
  /** Patterns its standard output must match. */
  output: RegExp[];
}

const KINDS: Record<string, SnippetKind> = {
  sh: 'shell',
  bash: 'shell',
  shell: 'shell',
  console: 'shell',
  ts: 'ts',
  typescript: 'ts',
  python: 'python',
  py: 'python',
};

/** The blocks of one page, in order. */
export function parseSnippets(file: string, text: string): Snippet[] {
  const lines = text.split('\n');
  const snippets: Snippet[] = [];
  let notes: string[] = []; // HTML comments since the last non-blank, non-comment line
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const open = /^(\s*)```\s*([\w-]*)\s*$/u.exec(line);
    if (!open) {
      if (/^\s*<!--.*-->\s*$/u.test(line)) notes.push(line.trim());
      else if (line.trim() !== '') notes = [];
      continue;
    }
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/u.test(lines[j]!); j++) body.push(lines[j]!.slice(indent));
    if (j === lines.length) throw new Error(`${file}:${i + 1}: a code fence is never closed`);
    const lang = open[2]!.toLowerCase();
    const notRun = notes.map((n) => /^<!--\s*not run:\s*(.+?)\s*-->$/u.exec(n)?.[1]).find(Boolean);
    const output = notes.flatMap((n) => {
      const m = /^<!--\s*output:\s*(.+?)\s*-->$/u.exec(n);
      return m ? [new RegExp(m[1]!, 'u')] : [];
    });
    snippets.push({ file, line: i + 1, lang, kind: KINDS[lang], code: body.join('\n'), notRun, output });
    notes = [];
    i = j;
  }
  return snippets;
}

/** The pages whose snippets are run: the README first, then docs/ in name order. */
export async function docPages(): Promise<string[]> {
  const docs = (await readdir(path.join(REPO_ROOT, 'docs'))).filter((f) => f.endsWith('.md')).sort();
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

/** Every page's blocks. */
export async function allSnippets(): Promise<Map<string, Snippet[]>> {
  const pages = new Map<string, Snippet[]>();
  for (const file of await docPages())
    pages.set(file, parseSnippets(file, await readFile(path.join(REPO_ROOT, file), 'utf8')));
  return pages;
}

/** Where the package's entry points are in the sources (a snippet imports them as a user does). */
const ENTRY_POINTS: Record<string, string> = {
  'durable-memory': 'src/index.ts',
  'durable-memory/openai-agents': 'src/adapters/openai-agents.ts',
  'durable-memory/ai-sdk': 'src/adapters/ai-sdk.ts',
  'durable-memory/langchain': 'src/adapters/langchain.ts',
};

/**
 * A TypeScript snippet as a module under `dir`: its imports of the package point at the sources, so
 * it is checked and run against the code of this checkout, never a stale build. With `built`, they
 * point at the build's files instead (`dist/src/…`, whose `.d.ts` are the types a user's import
 * gets): for a type check when dist/ was built from these sources (cli.ts's distIsFresh), which
 * then reads the declarations rather than type-checking every source file again.
 */
export function snippetModule(code: string, dir: string, options: { built?: boolean } = {}): string {
  return code.replace(/from '(durable-memory(?:\/[\w-]+)?)'/gu, (whole, name: string) => {
    const entry = ENTRY_POINTS[name];
    if (!entry) return whole;
    const file = options.built ? path.join('dist', entry) : entry;
    const rel = path.relative(dir, path.join(REPO_ROOT, file)).replace(/\.ts$/u, '.js');
    return `from '${rel.startsWith('.') ? rel : `./${rel}`}'`;
  });
}
