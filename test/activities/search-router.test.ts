// The topic router: keyword rules decide the clear cases without a model; an unclear query (no
// rule, or several) is classified once and kept per query text; a failing, slow or nonsensical
// classifier leaves the rules' answer. Then the searchTopic role through the real model client
// (call log, leases, schema, repairs) against a scripted model: one paid call for a repeated
// query, and the rules' answer with a note for the report when the model answers unusably.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { fallbackNotes } from '../../src/activities/role-kit/fallbacks';
import { createTopicClassifier } from '../../src/activities/roles/search-topic';
import {
  chooseProviders,
  classifyQuery,
  matchTopics,
  providersFor,
  routeQuery,
  TopicCache,
  type Topic,
} from '../../src/activities/search/router';
import { createStore, type Store } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { testConfig } from '../support/harness';
import { bySchema, ScriptedLlmServer } from '../support/llm-server';
import { databaseUrl, missingReason } from '../support/services';

const ALL = ['searxng', 'serper', 'wikipedia', 'openalex', 'arxiv', 'pubmed', 'semanticscholar'];

/** A classifier that counts its calls and answers `topic` (or fails, or never answers). */
function counting(answer: Topic | Error | 'never' | string) {
  const calls: string[] = [];
  const classify = async (q: string): Promise<Topic> => {
    calls.push(q);
    if (answer instanceof Error) throw answer;
    if (answer === 'never') return new Promise<Topic>(() => undefined);
    return answer as Topic;
  };
  return { calls, classify };
}

describe('the topic router', () => {
  it('maps each topic to its providers, falling back to the web ones, then to any two', () => {
    expect(providersFor('biomedical', ALL)).toEqual(['pubmed', 'semanticscholar']);
    expect(providersFor('academic', ALL)).toEqual(['openalex', 'arxiv', 'semanticscholar']);
    expect(providersFor('general', ALL)).toEqual(['searxng', 'serper']);
    expect(providersFor('news', ALL)).toEqual(['searxng', 'serper']);
    expect(providersFor('encyclopedic', ALL)).toEqual(['wikipedia', 'searxng']);
    expect(providersFor('biomedical', ['searxng', 'openalex'])).toEqual(['searxng']);
    expect(providersFor('general', ['wikipedia', 'openalex', 'arxiv'])).toEqual(['wikipedia', 'openalex']);
    expect(providersFor('general', ['arxiv', 'pubmed', 'semanticscholar'])).toEqual(['arxiv', 'pubmed']);
  });

  it('has rules for the clear cases, most specific first', () => {
    expect(matchTopics('statin therapy in elderly patients')).toEqual(['biomedical']);
    expect(matchTopics('peer-reviewed studies of statin therapy')).toEqual(['biomedical', 'academic']);
    expect(classifyQuery('peer-reviewed study of PV learning rates')).toBe('academic');
    expect(classifyQuery('who was Ada Lovelace')).toBe('encyclopedic');
    expect(classifyQuery('latest news on the EU AI Act')).toBe('news');
    expect(classifyQuery('solar panel prices 2024')).toBe('general');
    expect(routeQuery('peer-reviewed study of PV learning rates', ALL)).toEqual(['openalex', 'arxiv', 'semanticscholar']);
  });

  it('does not call the model when one rule is sure', async () => {
    const { calls, classify } = counting('general');
    const cache = new TopicCache();
    expect(await chooseProviders('randomized trial of statin therapy', ALL, classify, { cache })).toEqual({
      providers: ['pubmed', 'semanticscholar'],
      topic: 'biomedical',
      decidedBy: 'rules',
    });
    expect(await chooseProviders('who was Ada Lovelace', ALL, classify, { cache })).toMatchObject({
      topic: 'encyclopedic',
      decidedBy: 'rules',
    });
    expect(calls).toEqual([]);
  });

  it('asks the model once for an unclear query, and answers the same query again from the cache', async () => {
    const { calls, classify } = counting('biomedical');
    const cache = new TopicCache();
    const first = await chooseProviders('GLP-1 agonists and weight loss', ALL, classify, { cache });
    expect(first).toEqual({ providers: ['pubmed', 'semanticscholar'], topic: 'biomedical', decidedBy: 'model' });
    // The same text (spacing and case aside) and two callers at once: no new call.
    const again = await Promise.all([
      chooseProviders('GLP-1 agonists  and weight loss', ALL, classify, { cache }),
      chooseProviders('glp-1 agonists and weight loss', ALL, classify, { cache }),
    ]);
    expect(again.map((r) => r.decidedBy)).toEqual(['model', 'model']);
    expect(calls).toEqual(['GLP-1 agonists and weight loss']);
    // Several rules match: the model decides between them.
    await chooseProviders('peer-reviewed studies of statin therapy', ALL, classify, { cache });
    expect(calls).toHaveLength(2);
  });

  it("takes the rules' answer when the model fails, is too slow, or names no topic, and asks again next time", async () => {
    const cache = new TopicCache();
    const failing = counting(new Error('model down'));
    const query = 'peer-reviewed studies of statin therapy';
    expect(await chooseProviders(query, ALL, failing.classify, { cache })).toEqual({
      providers: ['pubmed', 'semanticscholar'],
      topic: 'biomedical',
      decidedBy: 'fallback',
    });
    await chooseProviders(query, ALL, failing.classify, { cache });
    expect(failing.calls).toHaveLength(2); // a failure is not kept
    expect(cache.size).toBe(0);
    const slow = counting('never');
    expect(await chooseProviders('GLP-1 agonists', ALL, slow.classify, { cache, timeoutMs: 50 })).toMatchObject({
      topic: 'general',
      providers: ['searxng', 'serper'],
      decidedBy: 'fallback',
    });
    const nonsense = counting('astrology');
    expect(await chooseProviders('tarot decks', ALL, nonsense.classify, { cache })).toMatchObject({
      topic: 'general',
      decidedBy: 'fallback',
    });
  });

  it('asks no one when every topic leads to the same providers, or when there is no classifier', async () => {
    const { calls, classify } = counting('academic');
    expect(await chooseProviders('GLP-1 agonists', ['searxng'], classify, { cache: new TopicCache() })).toEqual({
      providers: ['searxng'],
      topic: 'general',
      decidedBy: 'rules',
    });
    expect(calls).toEqual([]);
    expect(await chooseProviders('GLP-1 agonists', ALL)).toMatchObject({ topic: 'general', decidedBy: 'rules' });
  });

  it('keeps at most its capacity, dropping the least recently used', () => {
    const cache = new TopicCache(2);
    const t = (x: Topic) => Promise.resolve(x);
    cache.set('a', t('general'));
    cache.set('b', t('news'));
    void cache.get('a');
    cache.set('c', t('academic'));
    expect([cache.get('a'), cache.get('b'), cache.get('c')].map(Boolean)).toEqual([true, false, true]);
  });
});

const ready = Boolean(databaseUrl());

describe.skipIf(!ready)(`the searchTopic role through the model client (${ready ? 'live' : missingReason()})`, () => {
  const server = new ScriptedLlmServer();
  let pool: ReturnType<typeof createPool>;
  let store: Store;
  let llm: ReturnType<typeof createLlm>;

  beforeAll(async () => {
    await server.start();
    pool = createPool(databaseUrl()!, 4);
    store = createStore(pool);
    const config = testConfig(server.url);
    const client = createLlmClient(config);
    llm = createLlm({ config, calls: store.llmCalls, leases: store.llmLeases, client: () => client });
  });
  afterAll(async () => {
    await pool?.end();
    await server.close();
  });

  /** Runs `fn` as the first attempt of a webSearch activity of the run. */
  const asActivity = <T>(researchId: string, fn: () => Promise<T>): Promise<T> =>
    new MockActivityEnvironment({
      activityId: `search-${randomUUID()}`,
      activityType: 'webSearch',
      attempt: 1,
      workflowExecution: { workflowId: researchId, runId: 'r' },
    }).run(fn);

  it('classifies an unclear query with one logged model call, the query in its own block', async () => {
    server.script([{ match: bySchema('SearchTopic'), reply: { json: { topic: 'academic', reason: 'Looks for papers.' } } }]);
    const id = `topic-${randomUUID()}`;
    const cache = new TopicCache();
    const classify = createTopicClassifier({ llm, store }, id);
    const query = `transformer scaling laws ${id}`;
    const first = await asActivity(id, () => chooseProviders(query, ALL, classify, { cache }));
    const second = await asActivity(id, () => chooseProviders(query, ALL, classify, { cache }));
    expect(first).toEqual({ providers: ['openalex', 'arxiv', 'semanticscholar'], topic: 'academic', decidedBy: 'model' });
    expect(second).toEqual(first);
    expect(server.requests).toHaveLength(1);
    const user = server.requests[0]!.body.messages.find((m) => m.role === 'user')!.content as string;
    expect(user).toMatch(new RegExp(`<search_query>[\\s\\S]*${query}[\\s\\S]*</search_query>`));
    expect(server.requests[0]!.body.model).toBe('scripted-coordinator');
  });

  it("falls back to the rules' answer when the model answers unusably, and notes it for the report", async () => {
    server.script([{ match: bySchema('SearchTopic'), reply: { content: 'biology, probably' } }]);
    const id = `topic-${randomUUID()}`;
    const classify = createTopicClassifier({ llm, store }, id);
    const r = await asActivity(id, () =>
      chooseProviders('peer-reviewed studies of statin therapy', ALL, classify, { cache: new TopicCache() }),
    );
    expect(r).toEqual({ providers: ['pubmed', 'semanticscholar'], topic: 'biomedical', decidedBy: 'fallback' });
    expect(server.requests.length).toBeGreaterThanOrEqual(2); // the question and its repair requests
    expect(await fallbackNotes(store, id)).toEqual([
      expect.stringMatching(
        /^Fallback \(search-topic\): the providers for "peer-reviewed studies of statin therapy" were chosen by keyword rules/,
      ),
    ]);
  });
});
