/**
 * How the MCP tools map ids. Over HTTP a tenant's token scopes them (`<tenant>:<id>`, see
 * src/tenancy/tenant-scope.ts); over stdio `durable-memory mcp --tenant <name>` does the same, and
 * without it ids are used as given, as the client library stores them.
 */
import type { MemoryRecord } from '../memories/memory-store.js';
import type { ThreadInfo } from '../store/types.js';
import type { ContextResult } from '../client/context.js';
import { assertIdChars, type TenantScope } from '../tenancy/tenant-scope.js';
import { validateThreadId } from '../thread/thread-id.js';

/** What the tools need of a {@link TenantScope}. */
export type IdScope = Pick<
  TenantScope,
  'prefix' | 'scoped' | 'strip' | 'owns' | 'threadInfo' | 'memory' | 'context' | 'workingMemory'
>;

/** Ids as given: the scope of the client library (no tenant). */
export const UNSCOPED: IdScope = {
  prefix: '',
  scoped(id: string, field: string): string {
    // Thread and user ids share the thread id alphabet: the engine's check for a thread, and for the
    // rest the check a tenant's scope makes (`durable-memory mcp --user` is refused the same way with
    // or without --tenant, and at start, not on the first call).
    if (field === 'threadId') return validateThreadId(id);
    assertIdChars(id, field);
    return id;
  },
  strip: (id: string) => id,
  owns: () => true,
  threadInfo: (info: ThreadInfo) => info,
  memory: (record: MemoryRecord) => record,
  context: (ctx: ContextResult) => ctx,
  workingMemory: <T>(wm: T) => wm,
};
