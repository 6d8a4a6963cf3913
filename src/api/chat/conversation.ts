// What a chat request asks: the last user message is the question; the run id in the newest earlier
// answer of this endpoint (its footer) names the session the conversation continues; earlier turns
// with no such answer are context the question carries.
import { ApiError } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import type { ChatMessage } from './schemas';

/** The ids this API gives runs: `research-<uuid>`, or `research-<32 hex>` for an Idempotency-Key. */
const RUN_ID = /\bresearch-(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})\b/g;
/** Characters of earlier turns a question carries when no session continues. */
const CONTEXT_CHARS = 1_500;
const QUESTION_MAX = 4_000;

export interface Conversation {
  /** The last user message. */
  question: string;
  /** The run id the newest earlier answer names, if one does. */
  previousRunId?: string;
  /** Earlier user and assistant turns, oldest first. */
  earlier: { role: 'user' | 'assistant'; text: string }[];
}

/** A message's text: a string, or its text parts joined (images and other parts are not read). */
export function textOf(m: ChatMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (!m.content) return '';
  return m.content
    .map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : ''))
    .filter(Boolean)
    .join('\n');
}

const badMessages = (message: string) => new ApiError(400, 'invalid_messages', message, { param: 'messages' });

export function readConversation(messages: ChatMessage[]): Conversation {
  const last = messages.at(-1)!;
  if (last.role !== 'user') throw badMessages('the last message must be the user’s question (role "user")');
  const question = textOf(last).trim();
  if (!question) throw badMessages('the last user message has no text');
  const earlier = messages
    .slice(0, -1)
    .filter((m): m is ChatMessage & { role: 'user' | 'assistant' } => m.role === 'user' || m.role === 'assistant')
    .map((m) => ({ role: m.role, text: textOf(m).trim() }))
    .filter((m) => m.text);
  const previousRunId = earlier
    .filter((m) => m.role === 'assistant')
    .map((m) => [...m.text.matchAll(RUN_ID)].at(-1)?.[0])
    .reverse()
    .find((id) => id !== undefined);
  return { question, earlier, ...(previousRunId ? { previousRunId } : {}) };
}

/**
 * The question a run gets when no session of this tenant continues the conversation: earlier turns
 * (newest kept, each shortened) before it, within the question's 4000 characters.
 */
export function questionWithContext(c: Conversation): string {
  if (!c.earlier.length || c.question.length > QUESTION_MAX - 200) return c.question;
  const budget = Math.min(CONTEXT_CHARS, QUESTION_MAX - c.question.length - 120);
  const lines: string[] = [];
  let used = 0;
  for (const t of [...c.earlier].reverse()) {
    const line = `${t.role === 'user' ? 'User' : 'Assistant'}: ${summarize(t.text.replace(/\s+/g, ' '), 300)}`;
    if (used + line.length + 1 > budget) break;
    lines.unshift(line);
    used += line.length + 1;
  }
  if (!lines.length) return c.question;
  return `${c.question}\n\n(Earlier in this conversation:\n${lines.join('\n')})`;
}
