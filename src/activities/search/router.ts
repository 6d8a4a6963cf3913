// Which providers answer a query. Keyword rules decide the clear cases at no cost; when no rule
// matches, or several do, a classifier (the searchTopic role's model call, given by the caller)
// names the query's topic. Its answers are kept per query text in this process (a small LRU), so
// a query the researchers repeat is classified, logged and paid for once; a classifier that fails
// or is slow leaves the rules' answer.
import { SEARCH_PROVIDERS } from '../../infra/search/registry';
import { TOPICS, type Topic } from '../../infra/search/types';

export { TOPICS, type Topic };

/** The rules, most specific first: the first that matches is the rules' answer. */
const RULES: [Topic, RegExp][] = [
  [
    'biomedical',
    /\b(clinical|trials?|randomi[sz]ed|placebo|patients?|diseases?|drugs?|dosage|therap(y|ies)|cancers?|tumou?rs?|vaccines?|genes?|genomic|proteins?|mutations?|pubmed|medline|diagnos\w*|symptoms?|syndromes?|infections?|antibod(y|ies)|pharmac\w+|epidemiolog\w*|mortality|cohort|biomarkers?)\b/i,
  ],
  [
    'academic',
    /\b(paper|papers|study|studies|journal|peer[- ]reviewed|arxiv|doi|meta-analysis|preprint|citation|literature review|learning rate|empirical)\b/i,
  ],
  [
    'encyclopedic',
    /^(who (is|was)|what (is|are|was)|when (did|was)|where is|history of|definition of|define)\b|\b(biography|wikipedia)\b/i,
  ],
  ['news', /\b(latest|breaking|news|headlines?|today|yesterday|this (week|month)|announced|press release)\b/i],
];

/** Every topic whose rule matches the query, most specific first. */
export function matchTopics(query: string): Topic[] {
  const q = query.trim();
  return RULES.filter(([, re]) => re.test(q)).map(([topic]) => topic);
}

/** The rules' answer: the most specific topic that matches, else general. */
export function classifyQuery(query: string): Topic {
  return matchTopics(query)[0] ?? 'general';
}

/** The providers of each topic, in the registry's order of preference. */
const PROVIDERS_OF = Object.fromEntries(
  TOPICS.map((topic) => [topic, SEARCH_PROVIDERS.filter((p) => p.topics.includes(topic)).map((p) => p.name)]),
) as Record<Topic, string[]>;
/** The web providers: those that answer general queries. */
const WEB = PROVIDERS_OF.general;

/** The enabled providers for a topic; when none of its own is enabled, the general ones, then any two. */
export function providersFor(topic: Topic, enabled: string[]): string[] {
  const has = (n: string) => enabled.includes(n);
  const web = WEB.filter(has);
  let picked = PROVIDERS_OF[topic].filter(has);
  // An encyclopedia article and a web page or two answer "what is" questions best together.
  if (topic === 'encyclopedic') picked = [...picked, ...web.slice(0, 1)];
  if (!picked.length) picked = web.length ? web : ['wikipedia', 'openalex'].filter(has);
  return picked.length ? picked : enabled.slice(0, 2);
}

/** Which enabled providers answer a query, by the rules alone. */
export function routeQuery(query: string, enabled: string[]): string[] {
  return providersFor(classifyQuery(query), enabled);
}

/** Names a query's topic (the searchTopic role: src/activities/roles/search-topic.ts). */
export type TopicClassifier = (query: string) => Promise<Topic>;

export interface RouteChoice {
  providers: string[];
  topic: Topic;
  /** `rules`: a keyword rule was sure (or every topic has the same providers); `model`: the
   *  classifier named the topic (now or earlier in this process); `fallback`: it failed or was
   *  too slow, and the rules' answer stands. */
  decidedBy: 'rules' | 'model' | 'fallback';
}

/** A small LRU of classifications by query text; a pending one is shared by its callers. */
export class TopicCache {
  private readonly entries = new Map<string, Promise<Topic>>();
  constructor(private readonly capacity = 512) {}

  static key(query: string): string {
    return query.trim().replace(/\s+/g, ' ').toLowerCase();
  }

  get(key: string): Promise<Topic> | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: Promise<Topic>): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Drops an entry, unless another value has replaced it since. */
  drop(key: string, value: Promise<Topic>): void {
    if (this.entries.get(key) === value) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}

const processCache = new TopicCache();

export interface ChooseOptions {
  /** How long to wait for the classifier before the rules' answer is taken (it goes on, and its
   *  answer is kept for the next time). */
  timeoutMs?: number;
  cache?: TopicCache;
}

export const CLASSIFY_TIMEOUT_MS = 15_000;

/** Which enabled providers answer a query, and how that was decided. */
export async function chooseProviders(
  query: string,
  enabled: string[],
  classify?: TopicClassifier,
  opts: ChooseOptions = {},
): Promise<RouteChoice> {
  const matched = matchTopics(query);
  const rules = matched[0] ?? 'general';
  const byRules = (decidedBy: RouteChoice['decidedBy']): RouteChoice => ({
    providers: providersFor(rules, enabled),
    topic: rules,
    decidedBy,
  });
  // Sure, no one to ask, or nothing to decide (every topic leads to the same providers).
  if (matched.length === 1 || !classify || new Set(TOPICS.map((t) => providersFor(t, enabled).join())).size === 1) return byRules('rules');
  const cache = opts.cache ?? processCache;
  const key = TopicCache.key(query);
  let pending = cache.get(key);
  if (!pending) {
    const asked = classify(query).then((t) => {
      if (!TOPICS.includes(t)) throw new Error(`the classifier named no known topic: ${String(t).slice(0, 40)}`);
      return t;
    });
    pending = asked;
    cache.set(key, asked);
    asked.catch(() => cache.drop(key, asked));
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), opts.timeoutMs ?? CLASSIFY_TIMEOUT_MS)));
  try {
    const topic = await Promise.race([pending, late]);
    if (!topic) return byRules('fallback');
    return { providers: providersFor(topic, enabled), topic, decidedBy: 'model' };
  } catch {
    return byRules('fallback');
  } finally {
    clearTimeout(timer);
  }
}
