// What the service remembers about a user: facts in a few categories, each with the user's own
// words it was learned from. The schemas are shared by the store, the learning step, the API's
// contract and the workflow input; the rules that keep facts grounded, merged and deleted for
// good are plain functions here, so the unit tests and the activity use the same code.
import { z } from 'zod';
import { evidentLanguage } from './locale';

/** A user id: in requests (`userId`), in the memory routes' query, in the workflow input. */
export const USER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export const UserId = z
  .string()
  .regex(USER_ID_PATTERN, 'userId must be 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit');

/** The user a run reads and teaches memory for, as the API resolved it (the workflow never guesses). */
export const RunUser = z.object({
  id: z.string(),
  memory: z.boolean(),
  /** What the user wrote of the question, when the run's question carries more (a chat's earlier
   *  turns as context, which may be anyone's words): the only part of it memory learns from. */
  said: z.string().optional(),
});
export type RunUser = z.infer<typeof RunUser>;

/** Whose memory an activity reads: the run's tenant and user, absent when memory is off. */
export const MemoryOwner = z.object({ tenant: z.string(), userId: z.string() });
export type MemoryOwner = z.infer<typeof MemoryOwner>;

export const FactCategory = z.enum(['field', 'expertise', 'language', 'sources', 'dislike', 'other']);
export type FactCategory = z.infer<typeof FactCategory>;

/** Where the user said something: the question, plan feedback, a clarification answer, steering. */
export const EvidenceKind = z.enum(['question', 'feedback', 'clarification', 'steering']);
export type EvidenceKind = z.infer<typeof EvidenceKind>;

export const Evidence = z.object({
  researchId: z.string(),
  kind: EvidenceKind,
  quote: z.string(),
  /** When the user said it (ISO time). */
  at: z.string(),
});
export type Evidence = z.infer<typeof Evidence>;

export const FactId = z.string().regex(/^F[0-9a-f]{16}$/, 'not a fact id');
export const FACT_TEXT_MAX = 200;
export const FactText = z
  .string()
  .trim()
  .min(1, 'text must not be empty')
  .max(FACT_TEXT_MAX, `text is longer than ${FACT_TEXT_MAX} characters`);

export const MemoryFact = z.object({
  id: z.string(),
  category: FactCategory,
  text: z.string(),
  evidence: z.array(Evidence),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type MemoryFact = z.infer<typeof MemoryFact>;

/** What a user said in one run, in order: what the learning step may learn from and quote. */
export const UserWords = z.array(z.object({ kind: EvidenceKind, text: z.string(), at: z.string() }));
export type UserWords = z.infer<typeof UserWords>;

export const MEMORY_LIMITS = {
  /** New or merged facts one run may teach. */
  factsPerRun: 8,
  /** Facts kept per user: the oldest with the least evidence go first. */
  factsPerUser: 50,
  /** Evidence items kept per fact (the newest). */
  evidencePerFact: 10,
  quoteChars: 300,
} as const;

/** Lower case, letters and digits only, single spaces: how texts and quotes are compared. */
export function normalize(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const STOP = new Set([
  'the',
  'a',
  'an',
  'is',
  'are',
  'of',
  'and',
  'or',
  'to',
  'in',
  'on',
  'for',
  'with',
  'user',
  'they',
  'their',
  'prefers',
]);

function tokens(text: string): Set<string> {
  return new Set(
    normalize(text)
      .split(' ')
      .filter((t) => t && !STOP.has(t)),
  );
}

/** Two facts say the same thing: equal normalized words, or most of their words shared. */
export function sameFact(a: string, b: string): boolean {
  if (normalize(a) === normalize(b)) return true;
  const [x, y] = [tokens(a), tokens(b)];
  if (!x.size || !y.size) return false;
  const shared = [...x].filter((t) => y.has(t)).length;
  return shared / Math.min(x.size, y.size) >= 0.8 && shared / Math.max(x.size, y.size) >= 0.5;
}

/** The user's words a quote is taken from, or undefined: a quote must occur in them (normalized). */
export function groundQuote(quote: string, words: UserWords): UserWords[number] | undefined {
  const q = normalize(quote);
  if (q.length < 3) return undefined;
  return words.find((w) => normalize(w.text).includes(q));
}

/** Words that say how a fact is phrased, not what it says ("the user does not want ..."). */
const PHRASING = new Set([
  ...STOP,
  'does',
  'not',
  'want',
  'wants',
  'like',
  'likes',
  'dislikes',
  'prefer',
  'would',
  'has',
  'have',
  'new',
  'very',
  'about',
  'from',
  'this',
  'that',
  'them',
]);

const keyWords = (text: string) => [...tokens(text)].filter((t) => t.length >= 3 && !PHRASING.has(t));
const stem = (word: string) => word.slice(0, 5);

/**
 * The fact says something its quote says: at least one of its words (by the first five letters,
 * so "teacher" meets "teach") is in the quote. Facts are written in English, so a quote evidently
 * in another language or script is not compared word by word; its own grounding stands.
 */
export function bearsOut(fact: string, quote: string): boolean {
  const { script, language } = evidentLanguage(quote);
  if (script !== 'latin' || (language !== undefined && language !== 'en')) return true;
  const said = new Set(keyWords(quote).map(stem));
  return keyWords(fact).some((w) => said.has(stem(w)));
}

/** What a deleted fact leaves behind. */
export interface Tombstone {
  norm: string;
  evidence: Evidence[];
  deletedAt: string;
}

const evidenceId = (e: Pick<Evidence, 'researchId' | 'quote'>) => `${e.researchId}\u0000${normalize(e.quote)}`;

/**
 * Evidence a deletion has ruled out for a fact: the deleted fact's own evidence (whatever fact it
 * is quoted for now), and anything said before the deletion for a fact that says the same thing.
 * New words after the deletion may teach it again.
 */
export function buried(text: string, e: Evidence, tombstones: Tombstone[]): boolean {
  return tombstones.some(
    (t) =>
      t.evidence.some((d) => evidenceId(d) === evidenceId(e)) || (sameFact(t.norm, text) && Date.parse(e.at) <= Date.parse(t.deletedAt)),
  );
}

/** A fact the learning step proposes, its quotes already grounded. */
export interface LearnedFact {
  category: FactCategory;
  text: string;
  evidence: Evidence[];
}

/** The facts after a run: merged with what was known, capped. `changed` lists the ids written. */
export interface MergeResult {
  facts: MemoryFact[];
  changed: string[];
  dropped: string[];
}

function mergeEvidence(old: Evidence[], add: Evidence[]): Evidence[] {
  const seen = new Set(old.map(evidenceId));
  const merged = [...old, ...add.filter((e) => !seen.has(evidenceId(e)) && seen.add(evidenceId(e)))];
  return merged.slice(-MEMORY_LIMITS.evidencePerFact);
}

/**
 * Merges learned facts into a user's facts: a fact that says the same as a known one adds its
 * evidence there (the known text stays: the user may have corrected it); a new one is added; then
 * the user's facts are capped, dropping the oldest with the least evidence. `newId` names new facts.
 */
export function mergeFacts(known: MemoryFact[], learned: LearnedFact[], now: string, newId: () => string): MergeResult {
  const facts = known.map((f) => ({ ...f, evidence: [...f.evidence] }));
  const changed = new Set<string>();
  for (const l of learned.slice(0, MEMORY_LIMITS.factsPerRun)) {
    const same = facts.find((f) => sameFact(f.text, l.text));
    if (same) {
      const evidence = mergeEvidence(same.evidence, l.evidence);
      if (evidence.length !== same.evidence.length) {
        Object.assign(same, { evidence, updatedAt: now });
        changed.add(same.id);
      }
      continue;
    }
    const fact = {
      id: newId(),
      category: l.category,
      text: l.text,
      evidence: mergeEvidence([], l.evidence),
      createdAt: now,
      updatedAt: now,
    };
    facts.push(fact);
    changed.add(fact.id);
  }
  const keep = [...facts]
    .sort((a, b) => b.evidence.length - a.evidence.length || b.updatedAt.localeCompare(a.updatedAt))
    .slice(0, MEMORY_LIMITS.factsPerUser);
  const kept = new Set(keep.map((f) => f.id));
  return {
    facts: facts.filter((f) => kept.has(f.id)),
    changed: [...changed].filter((id) => kept.has(id)),
    dropped: facts.filter((f) => !kept.has(f.id)).map((f) => f.id),
  };
}

/** The facts as the prompts' `<user_memory>` block holds them: one a line, empty when none. */
export function memoryLines(facts: Pick<MemoryFact, 'category' | 'text'>[]): string {
  return facts.map((f) => `- (${f.category}) ${f.text}`).join('\n');
}
