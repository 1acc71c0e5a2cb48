/**
 * What Temporal's own tools show about a thread's workflow: search attributes (`temporal workflow list
 * --query "UserId='alice'"`, the UI's filters) and a memo (the UI's title). Set by the client when it
 * starts the workflow (signal-with-start, update-with-start), so the workflow code knows nothing of it.
 *
 * The HTTP API stores tenant `acme`'s thread `t` as `acme:t` and user `u` as `acme:u`
 * (src/tenancy/tenant-scope.ts); here the tenant is split off again, so an operator queries
 * `TenantId='acme' AND UserId='alice'`. A thread id without `:` has TenantId `none`.
 *
 * The memo's title is the thread id, not the first user message: a memo is part of the workflow's
 * history, where message bodies never go (and erasure could not reach it there).
 *
 * A namespace without the attributes registered (someone's own cluster) refuses such a start; the
 * thread must work there all the same, so the start is made again without them, once warned.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

export const TENANT_ID = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
export const USER_ID = defineSearchAttributeKey('UserId', SearchAttributeType.KEYWORD);
export const RESOURCE_ID = defineSearchAttributeKey('ResourceId', SearchAttributeType.KEYWORD);
export const THREAD_ID = defineSearchAttributeKey('ThreadId', SearchAttributeType.KEYWORD);

/** Every search attribute a thread workflow carries; a Temporal namespace must have them registered. */
export const THREAD_SEARCH_ATTRIBUTES = [TENANT_ID, USER_ID, RESOURCE_ID, THREAD_ID] as const;

/** TenantId of threads stored without a tenant prefix (library and CLI use). */
export const NO_TENANT = 'none';

/** Who a thread belongs to, as stored. */
export interface ThreadOwner {
  threadId: string;
  userId?: string;
  resourceId?: string;
}

/** The start options that make a thread's workflow findable: `typedSearchAttributes` and `memo`. */
export function threadVisibility(
  owner: ThreadOwner,
  now: Date = new Date(),
): { typedSearchAttributes: SearchAttributePair[]; memo: Record<string, unknown> } {
  const colon = owner.threadId.indexOf(':');
  const tenant = colon > 0 ? owner.threadId.slice(0, colon) : undefined;
  const strip = (id: string): string =>
    tenant !== undefined && id.startsWith(`${tenant}:`) ? id.slice(tenant.length + 1) : id;
  const threadId = strip(owner.threadId);
  const pairs: SearchAttributePair[] = [
    { key: TENANT_ID, value: tenant ?? NO_TENANT },
    { key: THREAD_ID, value: threadId },
  ];
  if (owner.userId !== undefined) pairs.push({ key: USER_ID, value: strip(owner.userId) });
  if (owner.resourceId !== undefined) pairs.push({ key: RESOURCE_ID, value: owner.resourceId });
  return { typedSearchAttributes: pairs, memo: { title: threadId, created: now.toISOString() } };
}

/** `--search-attribute` flags of `temporal server start-dev` (and `temporal operator search-attribute create`). */
export function searchAttributeFlags(): string[] {
  return THREAD_SEARCH_ATTRIBUTES.flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]);
}

/** Set once a namespace refused the attributes: later starts of this process go without them. */
let unregistered = false;

/** What {@link startVisible} adds to a thread workflow's start options. */
export type ThreadStartOptions = Partial<ReturnType<typeof threadVisibility>> & {
  workflowTaskTimeout?: number;
};

/**
 * Runs a workflow start with {@link threadVisibility} options, or without them when the namespace
 * has not registered the search attributes (then warns once; see the module comment), and with the
 * connection's workflow task timeout (`workflowTaskTimeoutMs`, undefined: Temporal's).
 */
export async function startVisible<T>(
  owner: ThreadOwner,
  workflowTaskTimeoutMs: number | undefined,
  run: (options: ThreadStartOptions) => Promise<T>,
): Promise<T> {
  const timeout = workflowTaskTimeoutMs === undefined ? {} : { workflowTaskTimeout: workflowTaskTimeoutMs };
  const start = (visibility: Partial<ReturnType<typeof threadVisibility>>) =>
    run({ ...visibility, ...timeout });
  if (unregistered) return start({});
  try {
    return await start(threadVisibility(owner));
  } catch (err) {
    if (!isUnregisteredSearchAttribute(err)) throw err;
    unregistered = true;
    process.emitWarning(
      `thread workflows start without search attributes: ${errorText(err)}. Register them with ` +
        '`temporal operator search-attribute create --name <Name> --type Keyword` for ' +
        THREAD_SEARCH_ATTRIBUTES.map((k) => k.name).join(', '),
      { code: 'DURABLE_MEMORY_SEARCH_ATTRIBUTES' },
    );
    return start({});
  }
}

/** INVALID_ARGUMENT "Namespace … has no mapping defined for search attribute …", however wrapped. */
function isUnregisteredSearchAttribute(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (/no mapping defined for search attribute|invalid search attribute/iu.test(e.message)) return true;
  }
  return false;
}

function errorText(err: unknown): string {
  let text = err instanceof Error ? err.message : String(err);
  for (let e = err; e instanceof Error; e = e.cause) text = e.message;
  return text;
}
