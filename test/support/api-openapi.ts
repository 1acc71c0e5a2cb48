/**
 * Checks real HTTP answers against the checked-in openapi.json: the route and the status must be
 * documented, and the body must match the documented schema (ajv, JSON Schema 2020-12 as OpenAPI
 * 3.1 uses). Shared records are resolved through `#/components/schemas/…` like any OpenAPI tool would.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { REPO_ROOT } from './processes.js';

/** The parsed openapi.json at the repository root. */
export function checkedInOpenApi(): OpenApiDoc {
  return JSON.parse(readFileSync(path.join(REPO_ROOT, 'openapi.json'), 'utf8')) as OpenApiDoc;
}

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
  security?: unknown[];
}

/** The parts of an OpenAPI document the validator reads. */
export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

/** `/v1/threads/{id}` → a regex matching concrete paths, most specific templates first. */
function matcher(template: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/u)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/gu, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 'u');
}

/** Validates answers against an OpenAPI document; see the module comment. */
export class OpenApiValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; re: RegExp; literal: number }[];
  /** `GET /v1/threads/{id} 200` for every answer checked. */
  readonly seen = new Set<string>();

  constructor(readonly doc: OpenApiDoc = checkedInOpenApi()) {
    this.ajv.addSchema(doc as object, 'openapi.json');
    // A literal segment beats a parameter (`/v1/threads/import` before `/v1/threads/{id}`).
    this.templates = Object.keys(doc.paths)
      .map((template) => ({
        template,
        re: matcher(template),
        literal: template.replace(/\{[^}]+\}/gu, '').length,
      }))
      .sort((a, b) => b.literal - a.literal);
  }

  /** The documented template of a concrete path, or undefined. */
  templateOf(method: string, pathname: string): string | undefined {
    const m = method.toLowerCase();
    return this.templates.find((t) => t.re.test(pathname) && this.doc.paths[t.template]?.[m])?.template;
  }

  /**
   * Throws unless `body` is a documented answer of `method pathname` with `status`.
   * @returns the `METHOD template status` key (also added to {@link seen}).
   */
  check(method: string, pathname: string, status: number, body: unknown): string {
    const template = this.templateOf(method, pathname);
    if (!template) throw new Error(`${method} ${pathname}: no such operation in openapi.json`);
    const op = this.doc.paths[template]![method.toLowerCase()]!;
    const key = `${method.toUpperCase()} ${template} ${status}`;
    const response = op.responses[String(status)];
    if (!response)
      throw new Error(`${key}: status not documented (documented: ${Object.keys(op.responses)})`);
    const content = response.content?.['application/json'];
    if (!content) {
      if (body !== undefined)
        throw new Error(`${key}: documented without a body, got ${JSON.stringify(body)}`);
    } else {
      let validate = this.validators.get(key);
      if (!validate) {
        const pointer = [
          'paths',
          template,
          method.toLowerCase(),
          'responses',
          String(status),
          'content',
          'application/json',
          'schema',
        ]
          .map((t) => encodeURIComponent(t.replace(/~/gu, '~0').replace(/\//gu, '~1')))
          .join('/');
        validate = this.ajv.getSchema(`openapi.json#/${pointer}`);
        if (!validate) throw new Error(`${key}: cannot compile the documented schema`);
        this.validators.set(key, validate);
      }
      if (!validate(body))
        throw new Error(
          `${key}: answer does not match openapi.json: ${this.ajv.errorsText(validate.errors)}\n` +
            JSON.stringify(body).slice(0, 2000),
        );
    }
    this.seen.add(key);
    return key;
  }
}
