// How much of each prompt a provider's prefix cache could reuse, from the fake model's request log.
// A provider caches the rendered prompt's prefix (OpenAI, DeepSeek, vLLM's prefix caching all do):
// a request pays in full only for what follows the longest prefix it shares with something it has
// already seen. Each request's reusable part is its longest common prefix with any earlier request
// of its group; the share is the sum of those over the sum of the prompts' lengths, in characters.
// The group is by default a conversation: requests whose first two messages (the system prompt and
// the first user message) are the same. Grouped by run, it is what one run's requests could reuse
// of each other's (a role's stable instructions sent again by its next call); as one group, what a
// provider that caches across runs could.

/** The parts of a chat request that a provider renders into the prompt. */
export interface PromptRequest {
  tools?: unknown[];
  messages: { role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
}

/** The prompt as a provider renders it: the tools first, then each message in order. */
export function renderPrompt(req: PromptRequest): string {
  let out = req.tools?.length ? JSON.stringify(req.tools) : '';
  for (const m of req.messages) {
    out += `\n<|${m.role}|>\n${m.content ?? ''}`;
    if (m.tool_calls?.length) out += JSON.stringify(m.tool_calls);
    if (m.tool_call_id) out += `\n${m.tool_call_id}`;
  }
  return out;
}

/** Requests with the same key belong to one conversation: the same system prompt and first user message. */
export function conversationKey(req: PromptRequest): string {
  return JSON.stringify(req.messages.slice(0, 2).map((m) => [m.role, m.content ?? '', m.tool_calls ?? null, m.tool_call_id ?? null]));
}

export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** One request's place in its conversation. */
export interface PromptReuse {
  /** Index of the request in the input. */
  index: number;
  /** Its group: the conversation, unless prefixReuse was given another grouping. */
  conversation: string;
  /** The rendered prompt's length in characters. */
  length: number;
  /** Longest common prefix with any earlier request of the conversation (0 for its first). */
  reusable: number;
  /** The conversation's request just before this one, and where this one first differs from it. */
  predecessor?: { index: number; divergesAt: number };
}

/**
 * Each request's reusable prefix, in input order (the order the provider saw them). The longest
 * common prefix with any member of a set of strings is reached at one of the query's neighbours in
 * the set's sorted order, so each conversation keeps its earlier prompts sorted and compares each
 * new one with two of them, not with all.
 */
export function prefixReuse(
  requests: PromptRequest[],
  groupOf: (req: PromptRequest, index: number) => string = conversationKey,
): PromptReuse[] {
  const seen = new Map<string, { sorted: string[]; last: { index: number; prompt: string } }>();
  return requests.map((req, index) => {
    const prompt = renderPrompt(req);
    const conversation = groupOf(req, index);
    const c = seen.get(conversation);
    if (!c) {
      seen.set(conversation, { sorted: [prompt], last: { index, prompt } });
      return { index, conversation, length: prompt.length, reusable: 0 };
    }
    const at = sortedIndex(c.sorted, prompt);
    const reusable = Math.max(
      at > 0 ? commonPrefix(prompt, c.sorted[at - 1]!) : 0,
      at < c.sorted.length ? commonPrefix(prompt, c.sorted[at]!) : 0,
    );
    c.sorted.splice(at, 0, prompt);
    const predecessor = { index: c.last.index, divergesAt: commonPrefix(prompt, c.last.prompt) };
    c.last = { index, prompt };
    return { index, conversation, length: prompt.length, reusable, predecessor };
  });
}

function sortedIndex(sorted: string[], s: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Reusable characters ÷ prompt characters (0 when there are none). */
export function reuseShare(items: PromptReuse[]): number {
  const total = items.reduce((a, r) => a + r.length, 0);
  return total ? items.reduce((a, r) => a + r.reusable, 0) / total : 0;
}

/** The requests of the conversations that hold at least one request `isMember` picks. */
export function conversationsOf(items: PromptReuse[], isMember: (index: number) => boolean): PromptReuse[] {
  const picked = new Set(items.filter((r) => isMember(r.index)).map((r) => r.conversation));
  return items.filter((r) => picked.has(r.conversation));
}

/** Of the requests that do not start with the whole of their predecessor's prompt, the one that
 *  keeps the smallest part of it (the worst layout seen), with the text of both from a little
 *  before where they part. None when every request extends its predecessor. */
export function worstDivergence(
  items: PromptReuse[],
  promptOf: (index: number) => string,
  width = 80,
): { index: number; divergesAt: number; predecessorLength: number; before: string; after: string; context: string } | undefined {
  let worst: { item: PromptReuse; kept: number; predecessorLength: number } | undefined;
  for (const item of items) {
    if (!item.predecessor) continue;
    const predecessorLength = promptOf(item.predecessor.index).length;
    if (item.predecessor.divergesAt >= predecessorLength) continue;
    const kept = predecessorLength ? item.predecessor.divergesAt / predecessorLength : 1;
    if (!worst || kept < worst.kept) worst = { item, kept, predecessorLength };
  }
  if (!worst) return undefined;
  const at = worst.item.predecessor!.divergesAt;
  const oneLine = (s: string) => s.replace(/\s+/g, ' ');
  return {
    index: worst.item.index,
    divergesAt: at,
    predecessorLength: worst.predecessorLength,
    context: oneLine(promptOf(worst.item.index).slice(Math.max(0, at - 30), at)),
    before: oneLine(promptOf(worst.item.predecessor!.index).slice(at, at + width)),
    after: oneLine(promptOf(worst.item.index).slice(at, at + width)),
  };
}

/** The share of the prompt text in conversations' first requests: what no request of the same
 *  conversation could have cached before, however the prompts are laid out. */
export function firstRequestShare(items: PromptReuse[]): number {
  const total = items.reduce((a, r) => a + r.length, 0);
  return total ? items.filter((r) => !r.predecessor).reduce((a, r) => a + r.length, 0) / total : 0;
}
