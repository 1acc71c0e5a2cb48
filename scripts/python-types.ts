/**
 * Generates the Python package's TypedDicts (python/src/durable_memory/types.py) from openapi.json,
 * so the Python client describes the API's answers exactly as the TypeBox schemas (src/api/) do:
 *
 *   npm run gen:python-types        (after `npm run openapi`)
 *
 * What is generated: every shared record (`components/schemas`) and every 2xx JSON answer of a /v1
 * operation, each under its name; an object inside them is named by its component (a record embedded
 * rather than referenced is recognised by its shape) or by its schema's `title`. An object open to any
 * field (`additionalProperties`) is a `dict[str, Any]`. An object with no name is an error: give its
 * schema a `title`. test/unit/python-types.test.ts fails when types.py is not what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A JSON Schema node as openapi.json holds it. */
interface Schema {
  $ref?: string;
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
}

interface OpenApi {
  paths: Record<string, Record<string, { responses?: Record<string, ResponseObject> }>>;
  components: { schemas: Record<string, Schema> };
}

interface ResponseObject {
  content?: Record<string, { schema?: Schema }>;
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where the generated module is written. */
export const PYTHON_TYPES = path.join(REPO, 'python', 'src', 'durable_memory', 'types.py');

const HEADER = `"""What the API answers, as TypedDicts: the JSON itself (field names as openapi.json spells them),
so nothing is lost or renamed between the API and the caller.

Generated from openapi.json by scripts/python-types.ts (\`npm run gen:python-types\`): do not edit.
Each type comes after the types it uses, so the annotations are evaluated (\`NotRequired\` included).
"""

from typing import Any, Literal, NotRequired, TypedDict
`;

const PY_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);

/** The schema without its annotations, as text: two schemas of one shape compare equal. */
function shapeKey(schema: Schema): string {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
        if (k !== 'title' && k !== 'description' && k !== 'default') out[k] = strip(x);
      return out;
    }
    return v;
  };
  return JSON.stringify(strip(schema));
}

/** A Python string literal for a docstring, wrapped at 100 columns after `indent`. */
function docstring(text: string, indent: string): string {
  const clean = text.replace(/\\/gu, '\\\\').replace(/"""/gu, '\\"\\"\\"');
  const words = clean.split(/\s+/u);
  const lines: string[] = [];
  let line = '"""';
  let empty = true; // the line holds no word yet: only the opening quotes
  for (const word of words) {
    if (!empty && indent.length + line.length + 1 + word.length > 96) {
      lines.push(line);
      line = word;
    } else line = empty ? `${line}${word}` : `${line} ${word}`;
    empty = false;
  }
  lines.push(`${line}"""`);
  return lines.map((l) => indent + l).join('\n');
}

function literal(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (value === null) return 'None';
  return String(value);
}

const isOpen = (s: Schema) => s.additionalProperties !== undefined && s.additionalProperties !== false;

/** The Python source of types.py for `doc`. */
export function pythonTypes(doc: OpenApi): string {
  const components = doc.components.schemas;
  const byShape = new Map<string, string>();
  for (const [name, schema] of Object.entries(components)) byShape.set(shapeKey(schema), name);

  const defined = new Map<string, { key: string; source: string }>();
  const order: string[] = [];

  const define = (name: string, schema: Schema, make: () => string) => {
    const key = shapeKey(schema);
    const seen = defined.get(name);
    if (seen) {
      if (seen.key !== key) throw new Error(`two different schemas are named ${name}`);
      return;
    }
    defined.set(name, { key, source: '' }); // before make(): a recursive shape refers to itself
    const source = make();
    defined.set(name, { key, source });
    order.push(name);
  };

  /** The Python type of `schema`, defining the named types it needs first. */
  const typeOf = (schema: Schema, where: string): string => {
    if (schema.$ref) {
      const name = schema.$ref.replace('#/components/schemas/', '');
      named(name, components[name]!, where);
      return name;
    }
    if (schema.enum) return `Literal[${schema.enum.map(literal).join(', ')}]`;
    if (schema.const !== undefined) return `Literal[${literal(schema.const)}]`;
    if (schema.anyOf) {
      if (schema.title) {
        named(schema.title, schema, where);
        return schema.title;
      }
      return union(schema.anyOf, where);
    }
    const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
    if (types.length > 1) return types.map((type) => typeOf({ ...schema, type }, where)).join(' | ');
    switch (types[0]) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `list[${schema.items ? typeOf(schema.items, `${where}[]`) : 'Any'}]`;
      case 'object': {
        if (isOpen(schema) || !schema.properties) {
          const value = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {};
          return `dict[str, ${typeOf(value, `${where}{}`)}]`;
        }
        const name = byShape.get(shapeKey(schema)) ?? schema.title;
        if (!name) throw new Error(`${where}: an object with no name; give its schema a title`);
        named(name, components[name] ?? schema, where);
        return name;
      }
      default:
        return 'Any';
    }
  };

  const union = (members: Schema[], where: string): string => {
    if (members.every((m) => m.enum || m.const !== undefined))
      return `Literal[${members
        .flatMap((m) => m.enum ?? [m.const])
        .map(literal)
        .join(', ')}]`;
    return [...new Set(members.map((m, i) => typeOf(m, `${where}|${i}`)))].join(' | ');
  };

  /** Defines `name` for `schema`: a TypedDict for a closed object, an alias otherwise. */
  const named = (name: string, schema: Schema, where: string): void =>
    define(name, schema, () => {
      const doc = schema.description ? `\n${docstring(schema.description, '')}` : '';
      if (schema.type !== 'object' || isOpen(schema) || !schema.properties) {
        const alias = schema.anyOf
          ? union(schema.anyOf, name)
          : typeOf({ ...schema, title: undefined }, name);
        return `${name} = ${alias}${doc}`;
      }
      const required = new Set(schema.required ?? []);
      const fields = Object.entries(schema.properties).map(([field, prop]) => {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/u.test(field) || PY_KEYWORDS.has(field))
          throw new Error(`${where}.${field}: not a Python identifier`);
        const type = typeOf(prop, `${name}.${field}`);
        const line = `    ${field}: ${required.has(field) ? type : `NotRequired[${type}]`}`;
        return prop.description && !prop.$ref ? `${line}\n${docstring(prop.description, '    ')}` : line;
      });
      const body = schema.description ? [docstring(schema.description, '    '), '', ...fields] : fields;
      return `class ${name}(TypedDict):\n${body.join('\n')}`;
    });

  for (const [name, schema] of Object.entries(components)) named(name, schema, name);
  for (const [route, operations] of Object.entries(doc.paths)) {
    if (!route.startsWith('/v1/')) continue;
    for (const [method, operation] of Object.entries(operations))
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const schema = response.content?.['application/json']?.schema;
        if (status.startsWith('2') && schema) typeOf(schema, `${method.toUpperCase()} ${route} ${status}`);
      }
  }
  return `${HEADER}\n${order.map((name) => `\n${defined.get(name)!.source}\n`).join('\n')}`;
}

/** openapi.json at the repository root. */
export function readOpenApi(): OpenApi {
  return JSON.parse(readFileSync(path.join(REPO, 'openapi.json'), 'utf8')) as OpenApi;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(PYTHON_TYPES, pythonTypes(readOpenApi()));
  console.log(`wrote ${PYTHON_TYPES}`);
}
