/**
 * The input of the `update_working_memory` tool, once for every adapter that offers it (the AI SDK's
 * chats, the OpenAI Agents session); what it does lives in src/client/working-memory.ts.
 */
import { z } from 'zod';

export const workingMemoryToolInput = z.object({
  content: z.string().describe('The whole new working memory'),
  version: z.number().int().min(0).describe('The version shown in the working memory header (0 if none)'),
});
