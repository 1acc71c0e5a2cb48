/**
 * The OpenAPI 3.1 description's frame. The paths come from the routes' own schemas (the ones that
 * validate requests and serialise responses), gathered by @fastify/swagger, so the description
 * cannot drift from the behaviour. It is served at GET /openapi.json and checked in as openapi.json
 * (`npm run openapi`; test/unit/api-generated.test.ts fails when the two differ).
 */
import type { SwaggerOptions } from '@fastify/swagger';
import type { TSchema } from 'typebox';
import { closed } from './validator-compiler.js';

/** Version of this description (the paths are versioned by their `/v1` prefix). */
export const API_VERSION = '1.0.0';

const DESCRIPTION = `Durable chat memory for AI agents over HTTP: append a conversation's messages to a thread, read
the compacted view within a token budget, browse the full history, and manage the user's
long-term memories.

Authentication: \`Authorization: Bearer <token>\`. Tokens belong to tenants (\`npm run token -- create
--tenant <name>\`); a tenant sees only its own threads, users and memories, and another tenant's
thread answers 404. While no token exists, a server bound to 127.0.0.1 serves unauthenticated
requests from loopback as tenant \`local\`.

Errors: every failure is \`{ "error": { "code", "message", "field"? } }\`; decide by \`code\`.
503 answers carry \`Retry-After\`.

Input: a body field or query parameter that an operation does not define is refused (400
\`unknown_field\` naming it), in every object of a request, messages included; objects documented as
open (\`metadata\`, a strategy's options, OpenAI content parts and tool calls) take any field. Query
parameters follow the rules of body fields: a value that is not percent-encoded UTF-8 is 400
\`invalid_url\` or \`invalid_utf8\`, one with a NUL is 400 \`nul_byte\`, each naming the parameter.`;

/** Options of @fastify/swagger. */
export const SWAGGER_OPTIONS: SwaggerOptions = {
  // Requests are checked with the rule for unknown fields applied (validator-compiler.ts): say so.
  transform: ({ schema, url }) => {
    const s = schema as Record<string, unknown> | undefined;
    if (!s) return { schema, url };
    const out: Record<string, unknown> = { ...s };
    for (const part of ['body', 'querystring']) if (s[part]) out[part] = closed(s[part] as TSchema);
    return { schema: out as typeof schema, url };
  },
  // Shared records keep their names under components/schemas (the default would be `def-0`, …).
  refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json['$id'] ?? `def-${i}`) },
  openapi: {
    openapi: '3.1.0',
    info: { title: 'durable-memory', version: API_VERSION, description: DESCRIPTION },
    tags: [
      { name: 'messages', description: 'Append, history, context.' },
      { name: 'threads', description: 'List, state, configure, compact, delete, export, import.' },
      { name: 'memories', description: "Long-term memories of a tenant's users." },
      { name: 'users', description: 'Erasure of everything of one user.' },
      {
        name: 'working memory',
        description: 'A pinned block per user, resource or thread that the agent reads and replaces.',
      },
      { name: 'health', description: 'Liveness and readiness (no token).' },
    ],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'A token from `npm run token -- create --tenant <name>` (it starts with `dm_`).',
        },
      },
    },
  },
};
