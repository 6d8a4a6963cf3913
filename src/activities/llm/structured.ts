// A registered prompt asked as a model call whose answer is JSON its schema accepts: the request
// (rendered prompt, response format from the zod schema), and how a reply is read: parsed with
// the schema, or sent back once with what was wrong (prompts/model-call.md, repair-json).
import type OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import type { Message } from '../store';
import type { ModelRequest, ReplyReading, TextSink } from './model-request';
import { REPAIR_JSON } from './model-call';
import type { PromptOutput, PromptVars, StructuredPrompt } from './prompt-def';
import { renderPart, renderPrompt } from './render';

/** A prompt's response format, converted from its zod schema once (not at every call). */
const responseFormats = new WeakMap<object, ReturnType<typeof zodResponseFormat>>();
function responseFormatOf(schema: Parameters<typeof zodResponseFormat>[0], name: string): ReturnType<typeof zodResponseFormat> {
  let format = responseFormats.get(schema);
  if (!format || format.json_schema.name !== name) responseFormats.set(schema, (format = zodResponseFormat(schema, name)));
  return format;
}

/** JSON out of an answer that may wrap it in a code fence or a sentence. */
export function parseJsonAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)?.[1];
    if (fenced) return JSON.parse(fenced);
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    if (start >= 0 && end > start) return JSON.parse(text.slice(start, end + 1));
    throw err;
  }
}

/** Where a structured call is made, and how: its run, its key among the activity's calls, a model
 *  other than the role's, where its text streams to, and what a cut-off answer still gives. */
export interface StructuredContext {
  researchId: string;
  key?: string;
  model?: string;
  stream?: TextSink;
  /**
   * What the caller can keep of an answer cut off at its output limit (its JSON unfinished), to be
   * checked by the schema like any answer; undefined asks again, more briefly, as for any other
   * cut-off answer. Whatever it returns should say, in itself, that it was cut (the value is what is
   * logged and reused after a retry).
   */
  salvage?: (content: string) => unknown;
}

/** The model call of a registered prompt answered as JSON that its schema accepts. */
export function structuredRequest<P extends StructuredPrompt>(
  def: P,
  vars: PromptVars<P>,
  ctx: StructuredContext,
): ModelRequest<PromptOutput<P>> {
  const prompt = renderPrompt(def, vars);
  return answerRequest(
    def,
    [
      { role: 'system', content: prompt.system },
      { role: 'user', content: prompt.user },
    ],
    ctx,
  );
}

/**
 * A structured answer asked at the end of a conversation the model had with tools: its messages,
 * then `ask` as the user's; the tools go as they went (what a provider cached of the conversation
 * is reused), and the answer may not call them. Read as `def`'s answer.
 */
export function followUpRequest<P extends StructuredPrompt>(
  def: P,
  conversation: { messages: Message[]; tools: OpenAI.Chat.ChatCompletionTool[] },
  ask: string,
  ctx: StructuredContext,
): ModelRequest<PromptOutput<P>> {
  const req = answerRequest(def, [...conversation.messages, { role: 'user', content: ask }], ctx);
  return conversation.tools.length ? { ...req, tools: conversation.tools, toolChoice: 'none' } : req;
}

function answerRequest<P extends StructuredPrompt>(def: P, messages: Message[], ctx: StructuredContext): ModelRequest<PromptOutput<P>> {
  const schema = def.output.schema;
  const parse = (json: unknown) => schema.safeParse(json);
  return {
    researchId: ctx.researchId,
    role: def.role,
    promptName: def.file,
    maxTokens: def.maxTokens,
    key: ctx.key,
    ...(ctx.model ? { model: ctx.model } : {}),
    ...(ctx.stream ? { stream: ctx.stream } : {}),
    messages,
    responseFormat: responseFormatOf(schema, def.output.name),
    expected: def.output.name,
    reuse: (logged) => {
      const parsed = parse(logged);
      return parsed.success ? (parsed.data as PromptOutput<P>) : undefined;
    },
    read: (choice) => {
      const content = choice?.message?.content ?? '';
      const retry = (problem: string, cutOff = false): ReplyReading<never> => ({
        problem,
        repair: [
          { role: 'assistant', content },
          { role: 'user', content: renderPart(REPAIR_JSON, { problem, cutOff }) },
        ],
      });
      let json: unknown;
      try {
        json = parseJsonAnswer(content);
      } catch {
        if (choice?.finish_reason !== 'length') return retry(`the answer was not valid JSON: ${content.slice(0, 200)}`);
        const kept = ctx.salvage?.(content);
        const salvaged = kept === undefined ? undefined : parse(kept);
        if (salvaged?.success) return { value: salvaged.data as PromptOutput<P>, logged: salvaged.data };
        return retry('the answer was cut off (finish_reason: length)', true);
      }
      const parsed = parse(json);
      if (!parsed.success) {
        return retry(
          `the JSON did not match the schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
        );
      }
      return { value: parsed.data as PromptOutput<P>, logged: parsed.data };
    },
  };
}
