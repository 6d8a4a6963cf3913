// A chat completion asked for as a stream (`stream: true`), put back together into the completion
// the rest of the call path reads: content and tool calls joined from their deltas, the finish
// reason, the usage of the last chunk (asked for with stream_options.include_usage; estimated from
// the text when a server leaves it out). The text so far goes to `onText` as it arrives, so a
// writer's draft can be shown while it is written (src/activities/role-kit/draft-stream.ts).
import type OpenAI from 'openai';

type Chunk = OpenAI.Chat.ChatCompletionChunk;

/** Completions whose usage is an estimate (the server sent none): they teach nothing about its token counts. */
export const estimatedUsage = new WeakSet<OpenAI.Chat.ChatCompletion>();
type ToolCall = OpenAI.Chat.ChatCompletionMessageFunctionToolCall;

/** Joins a stream's chunks; `text()` is the answer so far (content, else the first tool call's arguments). */
export class CompletionAssembly {
  private content = '';
  private refusal = '';
  private readonly tools: ToolCall[] = [];
  private finish: OpenAI.Chat.ChatCompletion.Choice['finish_reason'] | null = null;
  private usage: OpenAI.CompletionUsage | undefined;
  private id = '';
  private model = '';
  private created = 0;

  add(chunk: Chunk): void {
    this.id ||= chunk.id ?? '';
    this.model ||= chunk.model ?? '';
    this.created ||= chunk.created ?? 0;
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const d = choice.delta ?? {};
    if (typeof d.content === 'string') this.content += d.content;
    if (typeof d.refusal === 'string') this.refusal += d.refusal;
    for (const t of d.tool_calls ?? []) {
      const at = (this.tools[t.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (t.id) at.id = t.id;
      if (t.function?.name) at.function.name += t.function.name;
      if (t.function?.arguments) at.function.arguments += t.function.arguments;
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
  }

  text(): string {
    return this.content || (this.tools[0]?.function.arguments ?? '');
  }

  /** The completion as a non-streamed answer would have been; `promptTokens` stands in for a usage the server did not send. */
  completion(fallbackModel: string, promptTokens: number): OpenAI.Chat.ChatCompletion {
    const tools = this.tools.filter(Boolean);
    const usage = this.usage ?? {
      prompt_tokens: promptTokens,
      completion_tokens: Math.ceil((this.content.length + tools.reduce((n, t) => n + t.function.arguments.length, 0)) / 4),
      total_tokens: 0,
    };
    const completion: OpenAI.Chat.ChatCompletion = {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model || fallbackModel,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: this.content || (tools.length ? null : ''),
            refusal: this.refusal || null,
            ...(tools.length ? { tool_calls: tools } : {}),
          },
          finish_reason: this.finish ?? 'stop',
          logprobs: null,
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    };
    if (!this.usage) estimatedUsage.add(completion);
    return completion;
  }
}

/** Reads a stream to its end, passing the text so far to `onText` after each chunk that added to it. */
export async function readStream(stream: AsyncIterable<Chunk>, onText: (text: string) => void): Promise<CompletionAssembly> {
  const assembly = new CompletionAssembly();
  let shown = 0;
  for await (const chunk of stream) {
    assembly.add(chunk);
    const text = assembly.text();
    if (text.length !== shown) {
      shown = text.length;
      onText(text);
    }
  }
  return assembly;
}
