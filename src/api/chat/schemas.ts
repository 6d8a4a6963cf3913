// The OpenAI chat-completions contract this endpoint speaks: the request fields it reads (others
// OpenAI clients send, such as temperature or user, are accepted and ignored), the answers in
// OpenAI's shapes, and its error body `{ error: { message, type, param, code } }`.
import { z } from 'zod';
import { ResearchOptions } from '../../shared/schemas';

/** The models: `deep-research` at the standard effort, and the quick and deep presets. */
export const CHAT_MODELS = {
  'deep-research': 'standard',
  'deep-research-quick': 'quick',
  'deep-research-deep': 'deep',
} as const;
export type ChatModel = keyof typeof CHAT_MODELS;

const TextPart = z.object({ type: z.literal('text'), text: z.string() }).loose();
const OtherPart = z.object({ type: z.string() }).loose();
export const ChatMessage = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
    content: z
      .union([z.string(), z.array(z.union([TextPart, OtherPart]))])
      .nullable()
      .optional(),
  })
  .loose();
export type ChatMessage = z.infer<typeof ChatMessage>;

/** `deep_research`: the run's options (as POST /v1/research takes them); plans auto-approve unless autoAcceptPlan is false. */
export const ChatResearchOptions = ResearchOptions.partial().strict().describe('research options of the run (see POST /v1/research)');

export const ChatCompletionRequest = z
  .object({
    model: z.string().min(1).describe('deep-research, deep-research-quick or deep-research-deep'),
    messages: z.array(ChatMessage).min(1, 'messages must hold at least the question').max(500),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullable().optional(),
    n: z.literal(1, 'this endpoint writes one answer: n must be 1').nullable().optional(),
    deep_research: ChatResearchOptions.optional(),
  })
  .loose();
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

export const ChatUsage = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

/** What a completion says of its run beside OpenAI's fields (clients pass unknown fields through). */
export const RunRef = z.object({
  runId: z.string(),
  sessionId: z.string(),
  status: z.string().describe('the run status when the answer was written'),
  reportUrl: z.string(),
  eventsUrl: z.string(),
});
export type RunRef = z.infer<typeof RunRef>;

export const ChatCompletion = z.object({
  id: z.string().describe('chatcmpl-<run id>'),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  system_fingerprint: z.string().describe('the run id'),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({ role: z.literal('assistant'), content: z.string(), reasoning_content: z.string().optional() }),
      finish_reason: z.literal('stop'),
      logprobs: z.null(),
    }),
  ),
  usage: ChatUsage.optional(),
  deep_research: RunRef,
});
export type ChatCompletion = z.infer<typeof ChatCompletion>;

export const ChatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  system_fingerprint: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({
        role: z.literal('assistant').optional(),
        content: z.string().optional(),
        reasoning_content: z.string().optional(),
      }),
      finish_reason: z.literal('stop').nullable(),
      logprobs: z.null(),
    }),
  ),
  usage: ChatUsage.nullable().optional(),
  deep_research: RunRef.optional(),
});
export type ChatCompletionChunk = z.infer<typeof ChatCompletionChunk>;

export const ModelView = z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() });
export const ModelList = z.object({ object: z.literal('list'), data: z.array(ModelView) });
export const ModelPath = z.object({ model: z.string().describe('the model id') });

export const OpenAiErrorBody = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});
export type OpenAiErrorBody = z.infer<typeof OpenAiErrorBody>;
