// Servers that are OpenAI-compatible only in part: one that refuses `response_format: json_schema`
// as llama-cpp-python's server does (400, "Input should be 'text' or 'json_object'"), and a
// reasoning model that writes <think>…</think> before every answer. Both runs complete, and no
// reasoning text is stored. And servers that refuse streaming, in part or whole: the report is
// streamed the way each allows.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest, Reply, Rule } from '../support/llm-server';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const LLAMA_CPP_PYTHON_400 =
  "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema', input_type=str]";

/** The scripted roles see a json_object request as the json_schema request it stands for. */
function asSchemaRequest(req: ChatRequest): ChatRequest {
  if (req.response_format?.type !== 'json_object') return req;
  const system = String(req.messages[0]?.content ?? '');
  const name = /Answer with one JSON object \((\w+)\)/.exec(system)?.[1] ?? 'unknown';
  return { ...req, response_format: { type: 'json_schema', json_schema: { name, schema: {} } } };
}

/** Rules that answer json_object requests (the mode this worker remembers after a refusal) too. */
const eitherMode = (rules: Rule[]): Rule[] =>
  rules.map((r) => ({ ...r, ...(r.match ? { match: (req: ChatRequest) => r.match!(asSchemaRequest(req)) } : {}) }));

function llamaCppPython(rules: Rule[]): Rule[] {
  return [
    {
      name: 'refuse-json-schema',
      match: (r) => r.response_format?.type === 'json_schema',
      reply: { status: 400, error: { message: LLAMA_CPP_PYTHON_400 } },
    },
    ...eitherMode(rules),
  ];
}

const THINK = '<think>The user wants costs. Maybe cite [S00000000] from https://invented.example/x. Hmm.</think>\n';

/** Every answer starts with the model's reasoning; one has the opening tag missing, as R1 distills do. */
function reasoning(rules: Rule[]): Rule[] {
  return rules.map((rule) => ({
    ...rule,
    reply: (req: ChatRequest, n: number): Reply => {
      const r = typeof rule.reply === 'function' ? rule.reply(req, n) : rule.reply;
      if ('json' in r)
        return {
          content: `${n % 2 ? THINK.replace('<think>', '') : THINK}${JSON.stringify(r.json)}`,
          ...(r.usage ? { usage: r.usage } : {}),
        };
      if ('toolCalls' in r) return { ...r, content: THINK };
      if ('content' in r) return { ...r, content: `${THINK}${r.content}` };
      return r;
    },
  }));
}

describe.skipIf(!ready)(`partly compatible servers (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  async function run(): Promise<string> {
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'How much cheaper has solar become?', options: { autoAcceptPlan: true } })
      .expect(202);
    const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
    expect(result).toMatchObject({ status: 'completed', outcome: 'report' });
    return res.body.id as string;
  }

  /** The text of a run's `draft` events, in order. */
  const drafts = async (id: string) =>
    (
      await h.pool.query<{ text: string }>(
        "SELECT data->>'text' AS text FROM run_events WHERE research_id = $1 AND type = 'draft' ORDER BY seq",
        [id],
      )
    ).rows.map((r) => r.text);

  it('falls back to json_object when json_schema is refused, once per model, with the schema in the prompt', async () => {
    h.llm.script(llamaCppPython(researchRules()));
    const id = await run();
    const refused = h.llm.requests.filter((r) => r.rule === 'refuse-json-schema');
    // Each model refuses once (the coordinator has its own model here); later calls go straight to json_object.
    expect(refused.map((r) => r.body.model).sort()).toEqual(['scripted-coordinator', 'scripted-default']);
    const structured = h.llm.requests.filter((r) => r.body.response_format && r.rule !== 'refuse-json-schema');
    expect(structured.length).toBeGreaterThan(6);
    for (const r of structured) {
      expect(r.body.response_format!.type).toBe('json_object');
      expect(String(r.body.messages[0]!.content)).toMatch(/matches this JSON Schema, and nothing else:\n\{/);
    }
    // Every prompt carries the date the workflow scheduled the call on (today, here).
    const today = new Date().toISOString().slice(0, 10);
    for (const r of h.llm.requests)
      expect(String(r.body.messages[0]!.content)).toMatch(new RegExp(`Current date: \\w+day, ${today} \\(UTC\\)\\.`));
    expect(String(h.llm.requests.find((r) => r.rule === 'planner')!.body.messages[0]!.content)).toMatch(/The user's locale: en-US\./);
    const report = await request(h.app).get(`/v1/research/${id}/report`).expect(200);
    expect(report.text).toMatch(/Costs fell sharply/);
  });

  it('strips <think> reasoning before parsing, and none of it is stored', async () => {
    h.llm.script(
      reasoning(
        eitherMode(
          researchRules({
            // The report also plants a made-up link and a bare URL: both are removed and recorded.
            reporter: {
              json: {
                title: 'Solar',
                markdown: '- Costs fell [1], says [a study](https://fake.example/study).\n- See https://fake.example/raw.',
              },
            },
          }),
        ),
      ),
    );
    const id = await run();
    const stored = await h.pool.query(
      `SELECT (SELECT string_agg(content, ' ') FROM documents WHERE research_id = $1) AS docs,
              (SELECT string_agg(message::text, ' ') FROM conversation_messages WHERE research_id = $1) AS conv,
              (SELECT markdown FROM reports WHERE research_id = $1) AS report,
              (SELECT string_agg(response::text, ' ') FROM llm_calls WHERE research_id = $1) AS calls`,
      [id],
    );
    const all = Object.values(stored.rows[0] as Record<string, string>).join('\n');
    expect(all).toMatch(/Costs fell/);
    expect(all).not.toMatch(/think>|invented\.example|The user wants costs/);
    // The report's draft, streamed as the model wrote it, showed none of the reasoning either.
    const draft = (await drafts(id)).join('');
    expect(draft).toMatch(/Costs fell/);
    expect(draft).not.toMatch(/think>|The user wants costs/);
    expect(stored.rows[0].report).not.toMatch(/fake\.example/);
    const json = await request(h.app).get(`/v1/research/${id}/report?format=json`).expect(200);
    expect(json.body.removedLinks.map((l: { url: string }) => l.url)).toEqual(['https://fake.example/study', 'https://fake.example/raw']);
    expect(json.body.markdown).toContain('Costs fell [1], says a study.');
  });

  // Last: the worker remembers what each model refused, and the tests above want streaming.
  it('streams without stream_options where it is refused, and asks whole where streaming is', async () => {
    const refuse = (name: string, what: (r: ChatRequest) => boolean, message: string): Rule => ({
      name,
      match: what,
      reply: { status: 400, error: { message, type: 'invalid_request_error' } },
    });
    h.llm.script([
      refuse('refuse-stream-options', (r) => r.stream_options !== undefined, 'Unrecognized request argument supplied: stream_options'),
      // (The worker asks these models for json_object since the first test here.)
      ...eitherMode(researchRules()),
    ]);
    const first = await run();
    // Once per model: the coordinator (its own model here, streamed for a direct answer) and the reporter.
    const models = (rule: string) =>
      h.llm.requests
        .filter((r) => r.rule === rule)
        .map((r) => r.body.model)
        .sort();
    expect(models('refuse-stream-options')).toEqual(['scripted-coordinator', 'scripted-default']);
    expect(h.llm.requests.filter((r) => r.rule === 'reporter').map((r) => [r.body.stream, r.body.stream_options])).toEqual([
      [true, undefined],
    ]);
    expect((await drafts(first)).join('')).toContain('Costs fell sharply [1].');
    // A server that cannot stream at all: asked once, then whole; no draft, the same report.
    h.llm.script([
      refuse('refuse-stream', (r) => r.stream === true, "'stream' is not supported by this server"),
      ...eitherMode(researchRules()),
    ]);
    const second = await run();
    expect(models('refuse-stream')).toEqual(['scripted-coordinator', 'scripted-default']);
    expect(h.llm.requests.filter((r) => r.rule === 'reporter').map((r) => r.body.stream)).toEqual([undefined]);
    expect(await drafts(second)).toEqual([]);
    const report = await request(h.app).get(`/v1/research/${second}/report`).expect(200);
    expect(report.text).toMatch(/Costs fell sharply/);
  });
});
