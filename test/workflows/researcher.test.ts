// The ReAct researcher child workflow on the dev server, and the LLM activity's failure semantics.
import { randomUUID } from 'node:crypto';
import { createStore } from '../../src/activities/store';
import { makeXlsx } from '../support/kb-fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResearchOptions } from '../../src/shared/schemas';
import type { StepInput, StepOutput } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { defaultReact, researchRules, SOLAR_STEP, stepTitleOf, userText, type RoleOverrides } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { runResearcherStep } from '../support/researcher-step';

const ready = Boolean(temporalAddress() && databaseUrl());

const step = SOLAR_STEP;

describe.skipIf(!ready)(`researcher (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    // The python tool, offered wherever Docker can run it, has its own tests (researcher-python.test.ts).
    h = await startHarness({ env: { LLM_TIMEOUT_MS: '1500', RESEARCHER_PYTHON: 'false' } });
  });
  afterAll(async () => h?.close());

  const requestsFor = (rule: string) => h.llm.requests.filter((r) => r.rule === rule);

  async function research(overrides: RoleOverrides, extra: Partial<StepInput> = {}): Promise<{ id: string; out: StepOutput }> {
    h.llm.script(researchRules(overrides));
    return runResearcherStep(h, { question: 'How much cheaper has solar become?', step, ...extra });
  }

  it('searches, reads fixture pages and returns findings whose source ids all resolve to stored sources', async () => {
    const { id, out } = await research({});
    expect(out.key).toBe('step/costs/1');
    expect(out.sourceIds.length).toBeGreaterThan(0);
    const { rows } = await h.pool.query('SELECT source_id FROM sources WHERE research_id = $1 AND source_id = ANY($2)', [
      id,
      out.sourceIds,
    ]);
    expect(rows.map((r) => r.source_id).sort()).toEqual([...out.sourceIds].sort());
    // The crawled page's source now holds the extractor's evidence instead of the snippet.
    const crawled = await h.pool.query(
      "SELECT content FROM sources WHERE research_id = $1 AND provider = 'crawl' AND url LIKE '%/articles/solar-costs.html%'",
      [id],
    );
    expect(crawled.rows[0].content).toMatch(/Solar LCOE fell 89% from 2010 to 2022\./);
    expect(h.search.queries).toContain('Solar cost decline');
    expect(h.site.hits).toContain('/articles/solar-costs.html');
    const turns = requestsFor('react');
    expect(turns).toHaveLength(3);
    // knowledge_search is offered only to runs with a knowledge base (test/workflows/knowledge-research.test.ts);
    // think to steps with 5 tool rounds or more (8 by default).
    expect(turns[0]!.body.tools?.map((t) => t.function.name)).toEqual(['web_search', 'crawl', 'think']);
    // Tool results reach the model as tool messages that carry the source ids.
    const toolMsg = turns[1]!.body.messages.find((m) => m.role === 'tool')!;
    expect(toolMsg.content).toMatch(/\[S[0-9a-f]{8}\] Solar costs \(Solar cost decline\) — http/);
    const doc = await h.pool.query('SELECT content, source_ids FROM documents WHERE research_id = $1 AND key = $2', [id, 'step/costs/1']);
    expect(doc.rows[0].source_ids).toEqual(out.sourceIds);
    // The conversation is in PostgreSQL, not in the workflow history.
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    expect(JSON.stringify(history)).not.toMatch(/fell by about 89%/);
    // The search and the page read ran inside the turns that asked for them: no activity of their
    // own.
    const types = history.events!.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(types).not.toContain('webSearch');
    expect(types).not.toContain('crawlPage');
    expect(h.search.queries).toContain('Solar cost decline');
    // The turn that asked for no tools wrote the findings too: no activity of their own, and the
    // findings' model call made once, after the last turn's.
    expect(types).not.toContain('compressResearch');
    // The first turn went on with the next two rounds itself (each asked only for web tools): one
    // activity for the three model turns.
    expect(types.filter((t) => t === 'researcherTurn')).toHaveLength(1);
    const findings = h.llm.requests.filter(
      (r) => r.rule === 'researcher' && r.body.messages.some((m) => String(m.content).includes('Solar')),
    );
    expect(findings).toHaveLength(1);
    expect(findings[0]!.seq).toBeGreaterThan(turns[2]!.seq);
    // The findings are asked at the end of the conversation: the last turn's request, its answer,
    // then the ask, with the same tools (not to be called), so a provider's cache of it is reused.
    const last = turns[2]!.body;
    const asked = findings[0]!.body;
    expect(asked.messages.slice(0, last.messages.length)).toEqual(last.messages);
    expect(asked.messages.slice(last.messages.length).map((m) => m.role)).toEqual(['assistant', 'user']);
    expect(asked.messages.at(-2)!.content).toBe('I have what I need.');
    expect(asked.messages.at(-1)!.content).toMatch(/^Your tool use for this step is over: call no more tools\./);
    expect(asked.tools).toEqual(last.tools);
    expect(asked.tool_choice).toBe('none');
    expect(asked.response_format?.json_schema?.name).toBe('ResearchFindings');
  });

  it('asks for the findings from a transcript when the conversation and the ask are too long for the model', async () => {
    const refusal = { status: 400, error: { message: 'This prompt is too long for the model.', code: 'context_length_exceeded' } };
    // The findings' request refuses while it carries the conversation, and answers as a transcript.
    const researcher = (req: ChatRequest): Reply => {
      if (req.messages.some((m) => m.role === 'tool')) return refusal;
      const id = /\[(S[0-9a-f]{8})\]/.exec(userText(req))![1]!;
      return { json: { text: `Solar fell 89% [${id}].`, summary: 'Solar fell.' } };
    };
    const { out } = await research({ researcher });
    const asked = requestsFor('researcher');
    // As sent, then trimmed twice, then once as the transcript.
    expect(asked.map((r) => r.body.messages.some((m) => m.role === 'tool'))).toEqual([true, true, true, false]);
    expect(String(asked.at(-1)!.body.messages[0]!.content)).toMatch(/^You turn a researcher's working notes/);
    expect(String(asked.at(-1)!.body.messages[1]!.content)).toMatch(/TOOL RESULT:\n\[S[0-9a-f]{8}\]/);
    expect(asked.at(-1)!.body.tools).toBeUndefined();
    expect(out.sourceIds).toHaveLength(1);
  });

  it('records blocked and skipped pages in the tool result and goes on', async () => {
    const react = (req: ChatRequest): Reply => {
      const tools = req.messages.filter((m) => m.role === 'tool').length;
      if (tools === 0)
        return {
          toolCalls: [
            {
              name: 'crawl',
              arguments: {
                urls: [
                  'http://169.254.169.254/latest/meta-data/',
                  'http://localhost/admin',
                  `${h.site.url}/private/secret.html`,
                  `${h.site.url}/articles/battery-storage.html`,
                ],
                goal: 'battery prices',
              },
            },
          ],
        };
      return { content: 'done' };
    };
    const { out } = await research({ react });
    const toolMsg = String(requestsFor('react')[1]!.body.messages.find((m) => m.role === 'tool')!.content);
    expect(toolMsg).toMatch(
      /http:\/\/169\.254\.169\.254\/latest\/meta-data\/: blocked \(blocked address: 169\.254\.169\.254 is a linkLocal address\)/,
    );
    expect(toolMsg).toMatch(
      /http:\/\/localhost\/admin: blocked \(blocked address: localhost resolves to 127\.0\.0\.1 is a loopback address\)/,
    );
    expect(toolMsg).toMatch(/\/private\/secret\.html: skipped \(robots\.txt disallows this URL\)/);
    expect(toolMsg).toMatch(/\[S[0-9a-f]{8}\] Battery pack prices — http/);
    expect(out.key).toBe('step/costs/1');
    expect(h.site.hits).not.toContain('/private/secret.html');
  });

  it('repairs malformed tool-call JSON with one more request', async () => {
    const react = (req: ChatRequest, n: number): Reply =>
      n === 0 ? { toolCalls: [{ name: 'web_search', arguments: '{"queries": [' }] } : defaultReact(req);
    const { out } = await research({ react });
    expect(out.sourceIds.length).toBeGreaterThan(0);
    const repair = requestsFor('react')[1]!.body.messages.at(-1)!;
    expect(repair.content).toMatch(/the arguments of web_search are not valid JSON: \{"queries": \[/);
  });

  it('ends the tool use with a note when the tool JSON stays malformed after two repairs', async () => {
    const react: Reply = { toolCalls: [{ name: 'web_search', arguments: '{"queries": ["unclosed"' }] };
    const { id, out } = await research({ react });
    expect(out.key).toBe('step/costs/1');
    const turns = requestsFor('react');
    expect(turns).toHaveLength(3);
    expect(String(turns[2]!.body.messages.at(-1)!.content)).toMatch(/not valid JSON/);
    const notes = await h.pool.query("SELECT content FROM documents WHERE research_id = $1 AND kind = 'fallback'", [id]);
    expect(notes.rows.map((r) => r.content).join('\n')).toMatch(/stopped using tools/);
  });

  it('asks again when a reply is cut off (finish_reason: length)', async () => {
    const react = (req: ChatRequest, n: number): Reply => (n === 0 ? { content: '', finishReason: 'length' } : defaultReact(req));
    const { out } = await research({ react });
    expect(out.key).toBe('step/costs/1');
    expect(requestsFor('react')[1]!.body.messages.at(-1)!.content).toMatch(/cut off \(finish_reason: length\)/);
  });

  it('keeps what a cut-off answer and cut-off findings finished, says so, and asks neither again', async () => {
    const finished = [
      'Utility-scale solar fell from 0.445 to 0.049 USD per kWh between 2010 and 2022 in the fixture data.',
      'Module prices did most of the work, and installation costs followed a few years later.',
    ];
    // The third turn answers in words and is cut off inside its third paragraph.
    const react = (req: ChatRequest, n: number): Reply =>
      n < 2 ? defaultReact(req) : { content: `${finished.join('\n\n')}\n\nBattery packs fell over the same`, finishReason: 'length' };
    // The findings are cut off too, inside their text, before their summary came.
    const researcher = (req: ChatRequest): Reply => {
      const id = /\[(S[0-9a-f]{8})\]/.exec(userText(req))![1]!;
      const text = `${finished[0]} [${id}]\n\n${finished[1]} [${id}]\n\nBattery packs cost`;
      return { content: `{"text": ${JSON.stringify(text).slice(0, -1)}`, finishReason: 'length' };
    };
    const { id, out } = await research({ react, researcher });
    expect(requestsFor('react')).toHaveLength(3);
    expect(requestsFor('researcher')).toHaveLength(1);
    const turn = await h.pool.query('SELECT message FROM conversation_messages WHERE research_id = $1 ORDER BY seq DESC LIMIT 1', [id]);
    expect(turn.rows[0].message.content).toBe(finished.join('\n\n'));
    const doc = await h.pool.query('SELECT content FROM documents WHERE research_id = $1 AND key = $2', [id, out.key]);
    expect(doc.rows[0].content).toContain(finished[1]);
    expect(doc.rows[0].content).not.toMatch(/Battery packs cost|cut off at the output limit/);
    expect(out.sourceIds).toHaveLength(1);
    const notes = await h.pool.query("SELECT content FROM documents WHERE research_id = $1 AND kind = 'fallback' ORDER BY key", [id]);
    expect(notes.rows.map((r) => r.content)).toEqual([
      `Correction (researcher): the model's answer for "${step.title}" was cut off at its output limit: the step keeps the paragraphs it finished.`,
      `Correction (researcher): the model's findings for "${step.title}" were cut off at its output limit: the step keeps the paragraphs it finished.`,
    ]);
  });

  it('gives the researcher the background brief, and no web tools to a step that works from given material', async () => {
    const id = `researcher-${randomUUID()}`;
    await createStore(h.pool).saveDocument(id, {
      key: 'background',
      kind: 'background',
      content: 'Background: module prices fell 90% since 2010 [S0a0b0c0d].',
      summary: 'brief',
      sourceIds: [],
      meta: {},
    });
    // The model tries a web search anyway: it is told the tool is not the step's, and answers.
    const react = (req: ChatRequest): Reply =>
      req.messages.some((m) => m.role === 'user' && String(m.content).includes('not a tool of this step'))
        ? { content: 'From the brief: prices fell 90%.' }
        : { toolCalls: [{ name: 'web_search', arguments: { queries: ['solar'] } }] };
    h.llm.script(researchRules({ react }));
    await h.client.workflow.execute('researcherWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: id,
      args: [
        {
          researchId: id,
          question: 'How much cheaper has solar become?',
          locale: 'en-US',
          step: { ...step, needSearch: false },
          attempt: 1,
          feedback: '',
          dependencyKeys: [],
          maxToolRounds: 4,
        } satisfies StepInput,
      ],
    });
    const turns = h.llm.requests.filter(
      (r) => r.rule === 'react' && r.body.messages.some((m) => String(m.content).includes('module prices fell 90%')),
    );
    expect(turns.length).toBeGreaterThan(0);
    expect(turns[0]!.body.tools).toBeUndefined();
    expect(String(turns[0]!.body.messages[0]!.content)).toMatch(/works from the material given below/);
    expect(h.search.queries).not.toContain('solar');
  });

  it('reads an XLSX link with the document parsers: sheets and rows reach the extractor', async () => {
    const xlsx = await makeXlsx();
    h.site.route('/data/plants.xlsx', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
      res.end(xlsx);
    });
    const url = `${h.site.url}/data/plants.xlsx`;
    const react = (req: ChatRequest): Reply =>
      req.messages.some((m) => m.role === 'tool')
        ? { content: 'Read the sheet.' }
        : { toolCalls: [{ name: 'crawl', arguments: { urls: [url], goal: 'plant capacities' } }] };
    const { out } = await research({ react });
    const extract = h.llm.requests.filter((r) => r.rule === 'extractor').find((r) => userText(r.body).includes('Dunmore'));
    expect(userText(extract!.body)).toMatch(/## Plants[\s\S]*Plant: Dunmore; Country: Westvale; Capacity MW: 1728/);
    expect(out.sourceIds.length).toBeGreaterThan(0);
  });

  it('makes the model answer when the tool rounds are spent', async () => {
    const react: Reply = { toolCalls: [{ name: 'web_search', arguments: { queries: ['again'] } }] };
    const answer = (req: ChatRequest): Reply => (req.tools ? react : { content: 'Final answer.' });
    await research({ react: answer }, { maxToolRounds: 2 });
    const turns = requestsFor('react');
    expect(turns).toHaveLength(3);
    expect(turns[2]!.body.tools).toBeUndefined();
    expect(turns[2]!.body.messages.at(-1)!.content).toMatch(/Stop using tools: the tool rounds are spent/);
  });

  it('trims old tool results and asks again after a context-length error', async () => {
    // The server refuses until old tool results are trimmed: the activity's own trimming (to the
    // window the error states) does not shorten a conversation this small, so the workflow trims.
    const react = (req: ChatRequest): Reply => {
      const tools = req.messages.filter((m) => m.role === 'tool').length;
      const trimmed = req.messages.some((m) => m.role === 'tool' && String(m.content).includes('[trimmed to save context]'));
      if (tools >= 2 && !trimmed) {
        return { status: 400, error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } };
      }
      if (tools < 3) return { toolCalls: [{ name: 'web_search', arguments: { queries: [`q${tools}`] } }] };
      return { content: 'done' };
    };
    const { id } = await research({ react });
    const after = requestsFor('react').filter((r) => r.body.messages.filter((m) => m.role === 'tool').length >= 2);
    // The activity asks twice more itself, then the workflow trims the conversation.
    expect(after.slice(0, 3).map((r) => r.status)).toEqual([400, 400, 400]);
    expect(after[3]!.status).toBe(200);
    const trimmedMessages = after[3]!.body.messages.filter(
      (m) => m.role === 'tool' && String(m.content).includes('[trimmed to save context]'),
    );
    expect(trimmedMessages.length).toBeGreaterThan(0);
    const desc = await h.client.workflow.getHandle(id).fetchHistory();
    expect(JSON.stringify(desc)).toMatch(/trimConversation/);
  });

  describe('LLM failure semantics', () => {
    it('waits for Retry-After on 429: the next attempt comes at least 2 s later, one HTTP call per attempt', async () => {
      const react = (req: ChatRequest, n: number): Reply =>
        n === 0 ? { status: 429, headers: { 'retry-after': '2' }, error: { message: 'rate limited' } } : defaultReact(req);
      await research({ react });
      const [first, second] = requestsFor('react');
      expect(first!.status).toBe(429);
      expect(second!.startedAt - first!.endedAt!).toBeGreaterThanOrEqual(2_000);
      expect(requestsFor('react').filter((r) => r.status === 429)).toHaveLength(1);
    });

    it('retries a hung request after the client timeout', async () => {
      const react = (req: ChatRequest, n: number): Reply => (n === 0 ? { hang: true } : defaultReact(req));
      const { out } = await research({ react });
      expect(out.key).toBe('step/costs/1');
      const first = requestsFor('react')[0]!;
      await new Promise((r) => setTimeout(r, 50));
      expect(first.aborted).toBe(true);
    });

    it('fails at once on 401 with the reason', async () => {
      const react: Reply = { status: 401, error: { message: 'Incorrect API key provided: sk-****' } };
      const err = await research({ react }).catch((e: unknown) => e as Error);
      expect(String((err as { cause?: { cause?: Error } }).cause?.cause?.message ?? err)).toMatch(/401 .*Check OPENAI_API_KEY/);
      expect(requestsFor('react')).toHaveLength(1);
    });
  });

  it('runs inside a research run with maxToolRounds from the options', async () => {
    h.llm.script(researchRules({}));
    const id = `research-${randomUUID()}`;
    const r = await h.client.workflow.execute('researchWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: id,
      args: [{ question: 'q', tenant: 'default', options: ResearchOptions.parse({ autoAcceptPlan: true, maxToolRounds: 1 }) }],
    });
    expect(r).toMatchObject({ status: 'completed', outcome: 'report' });
    // With one round, each step searches once and must then answer.
    const turns = requestsFor('react');
    expect(turns.filter((t) => !t.body.tools)).toHaveLength(2);
    expect(stepTitleOf(turns[0]!.body)).toMatch(/^Step [ab]$/);
  });
});
