// The MCP server of deep-research: tools to start, follow, review, steer and read runs, and each
// run's report as a resource. Every tool calls the HTTP API through the CLI's client, so the API
// decides tenants and keys and validates every input the same way for MCP as for HTTP; an API
// refusal becomes a tool result with isError and the API's message. Tools return at once:
// follow_research waits a bounded time.
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { PlanEdit } from '../shared/update-schemas';
import { ApiFailure, type ApiClient } from '../cli/api-client';
import type { SteerInput } from '../shared/messages';
import { decodeOrKeep } from '../shared/text';
import { describeEvent, FOLLOW_DEFAULT_SECONDS, FOLLOW_MAX_SECONDS, followRun } from './follow';

export const MCP_SERVER_NAME = 'deep-research';
/** The version of this tool set (not of the package): raised when a tool's input or output changes. */
export const MCP_SERVER_VERSION = '1.0.0';
const REPORT_URI = 'deep-research://research/{id}/report';
/** Longest text one tool result carries; a longer report is cut with a note saying where the rest is. */
const MAX_TEXT = 200_000;

const RunIdInput = z
  .string()
  .min(1)
  .max(200)
  // "." and ".." would climb out of the run's path (the client refuses them too: checkPath).
  .refine((id) => !/^\.{1,2}$/.test(id), 'not a run id')
  .describe('the run id, e.g. research-…');
export const reportUri = (id: string) => `deep-research://research/${encodeURIComponent(id)}/report`;

function text(t: string, structured?: Record<string, unknown>): CallToolResult {
  const body = t.length > MAX_TEXT ? `${t.slice(0, MAX_TEXT)}\n\n[cut at ${MAX_TEXT} characters]` : t;
  return { content: [{ type: 'text', text: body }], ...(structured ? { structuredContent: structured } : {}) };
}

const json = (v: unknown) => text(JSON.stringify(v, null, 2), v as Record<string, unknown>);

/** Runs a tool's API calls; the API's refusals (4xx, unreachable) are the tool's error result. */
async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ApiFailure)) throw err;
    const why = err.status === 401 ? ' (check the API key: --key / DEEP_RESEARCH_KEY, or the Authorization header)' : '';
    return {
      content: [{ type: 'text', text: `error: ${err.message}${why}${err.status ? ` [${err.status} ${err.code}]` : ''}` }],
      isError: true,
    };
  }
}

const STEER_KINDS = ['guidance', 'wrapUp', 'banDomains', 'mustRead', 'addStep', 'dropStep', 'editStep'] as const;

/** The steer tool's flat input as the API's steering body (the API checks it). */
function steerBody(a: {
  kind: (typeof STEER_KINDS)[number];
  text?: string | undefined;
  domains?: string[] | undefined;
  urls?: string[] | undefined;
  collections?: string[] | undefined;
  stepId?: string | undefined;
  description?: string | undefined;
  title?: string | undefined;
}): Record<string, unknown> {
  switch (a.kind) {
    case 'guidance':
      return { kind: a.kind, text: a.text };
    case 'wrapUp':
      return { kind: a.kind };
    case 'banDomains':
      return { kind: a.kind, domains: a.domains };
    case 'mustRead':
      return { kind: a.kind, urls: a.urls ?? [], collections: a.collections ?? [] };
    case 'addStep':
      return { kind: a.kind, step: { id: a.stepId, title: a.title, description: a.description } };
    case 'dropStep':
      return { kind: a.kind, stepId: a.stepId };
    case 'editStep':
      return { kind: a.kind, stepId: a.stepId, description: a.description };
  }
}

/** What a client may tell its user about a tool (MCP tool annotations): the tools that only read
 *  this service's runs and collections change nothing and ask nothing of the outside world. */
const READS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

function registerRunTools(server: McpServer, client: ApiClient): void {
  server.registerTool(
    'start_research',
    {
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      title: 'Start a research run',
      description:
        'Starts a deep research run and returns its id at once (the run takes minutes). Then call follow_research to wait for it. ' +
        'With autoAcceptPlan false the run stops at its plan for review (approve_plan / revise_plan).',
      inputSchema: {
        question: z.string().min(1).max(4000).describe('the research question'),
        effort: z.enum(['quick', 'standard', 'deep']).optional().describe('how much work the run does (default standard)'),
        autoAcceptPlan: z.boolean().optional().describe('start researching without a plan review (default false)'),
        collections: z.array(z.string()).max(20).optional().describe('knowledge base collection ids the run searches'),
        sessionId: z.string().optional().describe('a session id: the run sees its earlier questions and reports'),
        options: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('further options of POST /v1/research (maxSteps, reportLength, locale, timeRange, ...)'),
      },
    },
    (a) =>
      guarded(async () => {
        const options = {
          ...(a.options ?? {}),
          ...(a.effort ? { effort: a.effort } : {}),
          ...(a.autoAcceptPlan !== undefined ? { autoAcceptPlan: a.autoAcceptPlan } : {}),
          ...(a.collections ? { collections: a.collections } : {}),
        };
        const started = await client.research.start({
          question: a.question,
          options,
          ...(a.sessionId ? { sessionId: a.sessionId } : {}),
        });
        return text(`Started ${started.id} (${started.status}). Call follow_research with this id to wait for progress.`, started);
      }),
  );

  server.registerTool(
    'get_research',
    {
      annotations: READS,
      title: 'Status and plan of a run',
      description: "A run's status, phase, plan (with its version, for approve_plan / revise_plan), steps, usage and what it waits for.",
      inputSchema: { id: RunIdInput },
    },
    ({ id }) => guarded(async () => json(await client.research.get(id))),
  );

  server.registerTool(
    'list_research',
    {
      annotations: READS,
      title: 'List runs',
      description: 'Your runs: running ones first (newest first), then ended ones. Filter by status or by words of the question.',
      inputSchema: {
        status: z.enum(['running', 'awaiting_review', 'completed', 'failed', 'cancelled']).optional(),
        q: z.string().max(200).optional().describe('words of the question'),
        limit: z.number().int().min(1).max(100).optional(),
        cursor: z.string().optional().describe('nextCursor of the previous page'),
      },
    },
    (a) =>
      guarded(async () => {
        return json(await client.research.list(a));
      }),
  );
}

/** follow_research: a bounded wait with one progress notification per event (see follow.ts). */
function registerFollowTool(server: McpServer, client: ApiClient): void {
  server.registerTool(
    'follow_research',
    {
      annotations: READS,
      title: 'Wait for a run to move on',
      description:
        `Waits up to timeoutSeconds (default ${FOLLOW_DEFAULT_SECONDS}, at most ${FOLLOW_MAX_SECONDS}) for the run's next events, ` +
        'sending each as a progress notification. Returns when the run ends, when it waits for a plan review or an answer, or at the timeout; ' +
        'pass lastEventId as `after` to the next call to continue where this one stopped.',
      inputSchema: {
        id: RunIdInput,
        after: z.number().int().min(0).optional().describe('lastEventId of the previous follow_research (default 0: from the start)'),
        timeoutSeconds: z.number().int().min(1).max(FOLLOW_MAX_SECONDS).optional(),
      },
    },
    ({ id, after, timeoutSeconds }, extra) =>
      guarded(async () => {
        const token = extra._meta?.progressToken;
        const result = await followRun(client, id, {
          after: after ?? 0,
          timeoutMs: (timeoutSeconds ?? FOLLOW_DEFAULT_SECONDS) * 1000,
          signal: extra.signal,
          onEvent: async (e, n) => {
            if (token === undefined) return;
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: n, message: describeEvent(e) },
            });
          },
        });
        const next =
          result.stopped === 'done'
            ? `The run ended (${result.status}); get_report reads its report.`
            : result.stopped === 'awaiting_input'
              ? 'The run waits for you: get_research shows the plan or question; then approve_plan, revise_plan or answer_clarification.'
              : `Still running; call follow_research again with after=${result.lastEventId}.`;
        return text([...result.lines, '', next].join('\n'), { ...result });
      }),
  );
}

function registerReviewTools(server: McpServer, client: ApiClient): void {
  const planVersion = z.number().int().positive().describe("the plan's version, from get_research (plan.version)");
  server.registerTool(
    'approve_plan',
    {
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      title: 'Approve the plan',
      description: 'Approves the plan under review; the research starts.',
      inputSchema: { id: RunIdInput, planVersion },
    },
    ({ id, planVersion: v }) => guarded(async () => json(await client.research.approve(id, v))),
  );
  server.registerTool(
    'revise_plan',
    {
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      title: 'Revise the plan',
      description:
        'Sends the plan under review back: feedback for the planner (it plans again), and/or edits of its steps made as given ' +
        '(setTitle, setDescription, setType, setDependencies, remove, add; refused with the reason when they would not make a plan). ' +
        'A new version comes for review.',
      inputSchema: {
        id: RunIdInput,
        planVersion,
        feedback: z.string().max(4000).optional().describe('what the planner should change'),
        edits: z
          .array(PlanEdit)
          .max(20)
          .optional()
          .describe('changes to the steps, applied in order, by step id (get_research shows them)'),
      },
    },
    ({ id, planVersion: v, feedback, edits }) =>
      guarded(async () => json(await client.research.revise(id, v, feedback ?? '', edits ?? []))),
  );
  server.registerTool(
    'answer_clarification',
    {
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      title: 'Answer a clarifying question',
      description: "Answers the question the run asked before planning (get_research shows it under 'waitingFor').",
      inputSchema: { id: RunIdInput, answer: z.string().min(1).max(4000) },
    },
    ({ id, answer }) => guarded(async () => json(await client.research.answer(id, answer))),
  );
  server.registerTool(
    'steer_research',
    {
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      title: 'Steer a running run',
      description:
        'One change to a running run: guidance (text) for every later model call; wrapUp to stop researching and write the report; ' +
        'banDomains (domains) to leave sites out; mustRead (urls and/or collections); addStep (stepId, title, description); ' +
        'dropStep (stepId) or editStep (stepId, description) of a step not yet started.',
      inputSchema: {
        id: RunIdInput,
        kind: z.enum(STEER_KINDS),
        text: z.string().max(4000).optional(),
        domains: z.array(z.string()).max(20).optional(),
        urls: z.array(z.string()).max(10).optional(),
        collections: z.array(z.string()).max(10).optional(),
        stepId: z.string().max(32).optional(),
        title: z.string().max(200).optional(),
        description: z.string().max(4000).optional(),
      },
    },
    ({ id, ...a }) =>
      // As the tool was given: the API checks it and says what is missing.
      guarded(async () => json(await client.research.steer(id, steerBody(a) as SteerInput))),
  );
}

function registerReportTools(server: McpServer, client: ApiClient): void {
  server.registerTool(
    'get_report',
    {
      annotations: READS,
      title: "A run's report",
      description: 'The finished report: Markdown (default), or JSON with the Markdown and its numbered references (title, URL).',
      inputSchema: { id: RunIdInput, format: z.enum(['markdown', 'json']).optional() },
    },
    ({ id, format }) =>
      guarded(async () => {
        if (format === 'json') return json(await client.research.reportJson(id));
        return text(await client.research.report(id));
      }),
  );
}

/** A collection id as given, or the id of the tenant's collection of that name. */
async function collectionIdOf(client: ApiClient, given: string): Promise<string> {
  if (/^C[0-9a-f]{16}$/.test(given)) return given;
  const { collections } = await client.collections.list();
  const found = collections.find((c) => c.name === given);
  if (!found) throw new ApiFailure(404, 'not_found', `no collection named "${given}" (list_collections shows yours)`);
  return found.id;
}

function registerKnowledgeTools(server: McpServer, client: ApiClient): void {
  server.registerTool(
    'list_collections',
    {
      annotations: READS,
      title: 'Knowledge base collections',
      description: 'Your knowledge base collections: id, name, description, documents and passages.',
      inputSchema: {},
    },
    () => guarded(async () => json(await client.collections.list())),
  );
  server.registerTool(
    'search_collection',
    {
      annotations: READS,
      title: 'Search a knowledge base collection',
      description:
        "A collection's passages for a query, best first, found as a run's knowledge_search finds them (full text and, when configured, embeddings).",
      inputSchema: {
        collection: z.string().min(1).max(200).describe('the collection id (C…) or its name'),
        query: z.string().min(1).max(500),
        k: z.number().int().min(1).max(20).optional().describe('passages to return (default 8)'),
      },
    },
    ({ collection, query, k }) =>
      guarded(async () => {
        const id = await collectionIdOf(client, collection);
        const found = await client.collections.search(id, {
          query,
          ...(k ? { k } : {}),
        });
        const lines = found.passages.map(
          (p, i) =>
            `[${i + 1}] ${p.documentTitle}${p.page ? ` p. ${p.page}` : ''}${p.headingPath.length ? ` — ${p.headingPath.join(' › ')}` : ''}\n${p.text}`,
        );
        const note = found.vectors === 'off' || found.vectors === 'unavailable' ? '(full-text matches only)\n' : '';
        return text(`${note}${lines.join('\n\n') || '(no matching passages)'}`, found);
      }),
  );
}

function registerReportResource(server: McpServer, client: ApiClient): void {
  const template = new ResourceTemplate(REPORT_URI, {
    // The tenant's recent completed runs (the API's first page of them).
    list: async () => {
      const page = await client.research.list({ status: 'completed', limit: 50 });
      return {
        resources: page.runs.map((r) => ({ uri: reportUri(r.id), name: r.question.slice(0, 120), mimeType: 'text/markdown' })),
      };
    },
  });
  server.registerResource(
    'report',
    template,
    { title: 'Research report', description: "A run's report as Markdown", mimeType: 'text/markdown' },
    async (uri, variables) => {
      const id = decodeOrKeep(String(variables.id));
      try {
        const markdown = await client.research.report(id);
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: markdown }] };
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 404)
          throw new McpError(ErrorCode.InvalidParams, `Resource not found: ${uri.href}: ${err.message}`);
        if (err instanceof ApiFailure) throw new McpError(ErrorCode.InvalidRequest, err.message);
        throw err;
      }
    },
  );
}

/** A server whose every call goes to the API through `client` (its key decides the tenant). */
export function createMcpServer(client: ApiClient): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    {
      instructions:
        'Deep research runs take minutes: start_research returns at once, follow_research waits for progress (call it again until the run ends), ' +
        'get_report reads the result. Plans wait for approve_plan unless autoAcceptPlan is set.',
    },
  );
  registerRunTools(server, client);
  registerFollowTool(server, client);
  registerReviewTools(server, client);
  registerReportTools(server, client);
  registerKnowledgeTools(server, client);
  registerReportResource(server, client);
  return server;
}
