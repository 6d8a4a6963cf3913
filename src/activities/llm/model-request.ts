// What a model call is asked with and how its reply is read: the request call.ts completes,
// request.ts sends and structured.ts builds for a registered prompt.
import type OpenAI from 'openai';
import type { LlmRole } from '../../shared/constants';
import type { Message } from '../store';

type Choice = OpenAI.Chat.ChatCompletion.Choice;

/** What a caller makes of a reply: the value (and what to log), or a problem to send back once. */
export type ReplyReading<T> = { value: T; logged: unknown } | { problem: string; repair: Message[] };

export interface ModelRequest<T> {
  researchId: string;
  role: LlmRole;
  /** The prompt's file name, for the call log. */
  promptName: string;
  /** Tells apart several calls made by one activity (e.g. extraction retries with a shorter page). */
  key?: string | undefined;
  /** A model the operator allows, asked instead of the role's on the primary provider (a report rewrite's). */
  model?: string | undefined;
  messages: Message[];
  tools?: OpenAI.Chat.ChatCompletionTool[];
  /** 'none': the tools go with the request as the conversation had them (the prefix a provider's
   *  cache holds), but the answer may not call them. */
  toolChoice?: 'none';
  responseFormat?: OpenAI.ResponseFormatJSONSchema;
  /** An output limit below the role's (a prompt whose answer is short). */
  maxTokens?: number | undefined;
  /** What the caller expected, for the error after a failed repair. */
  expected: string;
  read: (choice: Choice | undefined) => ReplyReading<T>;
  /** The value from a logged response of an attempt that finished the call but not the activity. */
  reuse: (logged: unknown) => T | undefined;
  /** Where the answer's text goes while it is written: the request is then streamed. */
  stream?: TextSink | undefined;
}

/** Takes an answer's text as it streams in; each request of the call (a repair, a retry) begins again. */
export interface TextSink {
  /** A request is about to be sent: what came before it is not this answer. */
  begin(): void;
  /** The answer's raw text so far (for a structured answer, the JSON as far as it has come). */
  update(raw: string): void;
}
