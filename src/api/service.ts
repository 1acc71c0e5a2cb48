/**
 * Schemas of service-stored conversations (docs/service-stored.md): the binding a thread is
 * configured with, what a context answers for it, a response record and the service state.
 */
import Type, { type Static } from 'typebox';
import {
  MAX_LOST_REASON_LENGTH,
  MAX_RESPONSE_ID_LENGTH,
  type ServiceKind as Kind,
  type ServiceSkip as Skip,
} from '../model/service.js';

const kindLiterals = [Type.Literal('openai-responses')] as const;
const skipLiterals = [
  Type.Literal('not_bound'),
  Type.Literal('no_response'),
  Type.Literal('lost'),
  Type.Literal('expired'),
  Type.Literal('model_changed'),
  Type.Literal('working_memory_changed'),
] as const;
const Kinds = Type.Union([...kindLiterals]);
/** Fails to compile when the API's literals and the model's lists (src/model/service.ts) differ. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const SERVICE_LITERALS_MATCH: [
  Same<Static<typeof Kinds>, Kind>,
  Same<Static<typeof ServiceSkip>, Skip>,
] = [true, true];

/** The provider-stored conversation a thread is bound to. */
export const ServiceBinding = Type.Object(
  {
    kind: Type.Union([...kindLiterals], {
      description: '`openai-responses`: OpenAI Responses with `store: true` and `previous_response_id`.',
    }),
    maxAgeMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'A response older than this is not chained to (default: 29 days).',
      }),
    ),
  },
  { title: 'ServiceBinding', additionalProperties: false },
);
export type ServiceBinding = Static<typeof ServiceBinding>;

/** Why a context has no `service`. */
export const ServiceSkip = Type.Union([...skipLiterals], {
  description:
    'Why `service` is absent: `not_bound`, `no_response` (none recorded yet), `lost` (`serviceLost`), `expired` (older than `maxAgeMs`), `model_changed` (the model of the context, else of the thread, is not the one the response was appended for), `working_memory_changed` (the working memory the context pins was written since the response was recorded: the full context pins the new one).',
});

/** The provider-stored conversation's side of a context. */
export const ServiceContext = Type.Object(
  {
    previousResponseId: Type.String({ description: 'Send as `previous_response_id`.' }),
    input: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: 'The messages since that response, as Responses API input items.',
    }),
    afterSeq: Type.Integer({ minimum: 0, description: 'Seq of the last message the response covers.' }),
  },
  { title: 'ServiceContext' },
);

/** A provider response id recorded with an append. */
export const ServiceResponse = Type.Object(
  {
    seq: Type.Integer({ minimum: 1 }),
    responseId: Type.String(),
    model: Type.String(),
    recordedAt: Type.String(),
    lost: Type.Optional(
      Type.Object({ reason: Type.String(), at: Type.String() }, { title: 'ServiceLostMark' }),
    ),
  },
  { title: 'ServiceResponse' },
);

/** A thread's provider-stored conversation, as `state()` and `serviceLost` answer it. */
export const ServiceState = Type.Object(
  {
    kind: Kinds,
    response: Type.Optional(ServiceResponse),
    usable: Type.Boolean({ description: 'Whether the next `context?service=true` chains to it.' }),
    skipped: Type.Optional(ServiceSkip),
  },
  { title: 'ServiceState' },
);
export type ServiceState = Static<typeof ServiceState>;

/** The response id an append carries. */
export const ResponseIdField = Type.String({
  minLength: 1,
  maxLength: MAX_RESPONSE_ID_LENGTH,
  description:
    "The provider's response id these messages end (a thread bound with `service`): the next context chains to it.",
});

/** POST /v1/threads/{id}/service-lost. */
export const ServiceLostBody = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: MAX_LOST_REASON_LENGTH,
      description: 'Why the chain is unusable, e.g. `not_found` (the provider answered 404), `store_false`.',
    }),
  },
  { additionalProperties: false },
);
export type ServiceLostBody = Static<typeof ServiceLostBody>;
