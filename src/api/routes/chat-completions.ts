// The OpenAI-compatible way in: POST /v1/chat/completions runs a research job for the last user
// message (streamed as chat.completion.chunk events, or answered once it is done or the wait is
// over) and GET /v1/models lists the models, one per effort. Errors from here have OpenAI's shape.
import { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import { z, ZodError } from 'zod';
import { ApiError, failureMessage } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import type { StoredEvent } from '../../activities/store/events';
import { requestOrigin } from '../download';
import type { KnowledgeService } from '../knowledge-service';
import type { ResearchService } from '../research-service';
import { reply, route, type RouteTable } from '../route-spec';
import type { StreamSlots } from '../quotas';
import { chatUsage, finalAnswer, footer, runRef, type RunLinks } from '../chat/answer';
import { ChatDraft } from '../chat/draft';
import { followRun, type FollowSettings } from '../chat/follow';
import { progressLine } from '../chat/progress';
import {
  CHAT_MODELS,
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ModelList,
  ModelPath,
  ModelView,
  OpenAiErrorBody,
} from '../chat/schemas';
import { callerOf } from '../auth';
import { chatModel, startChatRun } from '../chat/start';

/** A conversation carries its earlier answers (whole reports). */
export const CHAT_BODY_LIMIT = '4mb';
/** CHAT_COMPLETION_WAIT's default. */
export const DEFAULT_CHAT_WAIT_MS = 5 * 60_000;

const openAiError = (description: string) => ({ description, content: OpenAiErrorBody });
/** A streamed answer's events as an SSE client reads them: unnamed, each data a chat.completion.chunk
 *  (ChatCompletionChunk) as JSON, the last one `[DONE]`, as OpenAI streams them. */
const ChunkMessage = z.object({
  event: z.literal('message'),
  data: z.string().describe('a chat.completion.chunk as JSON (id, object, created, model, choices[].delta); the last event: [DONE]'),
});

export const CHAT_ROUTES = {
  completions: {
    method: 'post',
    path: '/chat/completions',
    limit: 'submits',
    summary:
      'OpenAI-compatible: research the last user message (earlier answers of this endpoint continue their session); `stream: true` sends progress as reasoning_content and the report as content',
    body: { content: ChatCompletionRequest, required: true },
    responses: {
      200: {
        description: 'the report (or, past CHAT_COMPLETION_WAIT, where to fetch it); streamed: chat.completion.chunk events, then [DONE]',
        content: { 'application/json': ChatCompletion, 'text/event-stream': ChunkMessage },
      },
      400: openAiError('invalid request; `param` names the field'),
      401: openAiError('no key, or a key that is unknown or revoked'),
      404: openAiError('no such model'),
      413: openAiError('body too large'),
    },
    errors: [429, 503],
  },
  models: {
    method: 'get',
    path: '/models',
    summary: 'OpenAI-compatible: the models, one per effort (deep-research, deep-research-quick, deep-research-deep)',
    responses: { 200: { description: 'the models', content: ModelList }, 401: openAiError('no key, or a key that is unknown or revoked') },
    errors: [429],
  },
  model: {
    method: 'get',
    path: '/models/:model',
    summary: 'OpenAI-compatible: one model',
    params: { path: ModelPath },
    responses: {
      200: { description: 'the model', content: ModelView },
      401: openAiError('no key, or a key that is unknown or revoked'),
      404: openAiError('no such model'),
    },
    errors: [429],
  },
} satisfies RouteTable;

export interface ChatRouteDeps {
  research: ResearchService;
  knowledge: Pick<KnowledgeService, 'createSession'>;
  follow: FollowSettings & { heartbeatMs?: number };
  /** How long a non-streaming request waits for the report (CHAT_COMPLETION_WAIT). */
  waitMs: number;
  preflight?: () => string | undefined;
  /** The tenant's event streams open at once: a streamed answer is one (the streams quota). */
  streams?: StreamSlots;
}

/** A fixed creation time for the models: they are presets, not trained artifacts. */
const MODELS_CREATED = 1_767_225_600;
const modelView = (id: string) => ({ id, object: 'model' as const, created: MODELS_CREATED, owned_by: 'deep-research' });
const now = () => Math.floor(Date.now() / 1000);

/** A chat client that goes away ends its wait, never the run. */
function leaving(req: Request, res: Response): AbortSignal {
  const left = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) left.abort();
  });
  req.on('aborted', () => left.abort());
  return left.signal;
}

export function chatRoutes(deps: ChatRouteDeps): Router {
  const r = Router();
  const C = CHAT_ROUTES;

  route(r, C.models, (_req, res) => {
    reply(res, C.models, 200, { object: 'list', data: Object.keys(CHAT_MODELS).map(modelView) });
  });

  route(r, C.model, (req, res) => {
    reply(res, C.model, 200, modelView(chatModel(ModelPath.parse(req.params).model)));
  });

  route(r, C.completions, async (req, res) => {
    const body = ChatCompletionRequest.parse(req.body ?? {});
    chatModel(body.model);
    const problem = deps.preflight?.();
    if (problem) throw new ApiError(503, 'llm_not_configured', problem);
    const tenant = String(res.locals.tenant);
    // Taken before the run starts: a stream refused starts nothing. Given back when the answer ends or the client leaves.
    const release = body.stream ? deps.streams?.take(tenant) : undefined;
    res.once('close', () => release?.());
    const run = await startChatRun(deps, body, tenant, callerOf(res.locals));
    const links: RunLinks = { ...run, base: requestOrigin(req) };
    const signal = leaving(req, res);
    const ended = await deps.research.owned(run.runId, tenant);
    const head = { id: `chatcmpl-${run.runId}`, created: now(), model: body.model, system_fingerprint: run.runId };
    if (body.stream) {
      await streamCompletion(deps, res, { body, links, tenant, head, signal, ended });
      return;
    }
    const progress: string[] = [];
    const end = await followRun(run.runId, deps.follow, {
      ended,
      signal,
      deadline: Date.now() + deps.waitMs,
      onEvent: (e) => void addLine(progress, e),
    });
    if (end === 'left') return;
    const { content, view } = await finalAnswer(deps.research, links, tenant, end);
    const usage = chatUsage(view);
    reply(res, C.completions, 200, {
      ...head,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, ...(progress.length ? { reasoning_content: progress.join('\n') } : {}) },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      ...(usage ? { usage } : {}),
      deep_research: runRef(links, view?.status ?? 'running'),
    });
  });

  return r;
}

function addLine(lines: string[], e: StoredEvent): string | undefined {
  const line = progressLine(e);
  if (line) lines.push(line);
  return line;
}

interface StreamRun {
  body: ChatCompletionRequest;
  links: RunLinks;
  tenant: string;
  head: { id: string; created: number; model: string; system_fingerprint: string };
  signal: AbortSignal;
  ended: () => Promise<boolean>;
}

/** The run as chat.completion.chunk events: progress as reasoning_content; the report's draft as content while it
 *  is written, then the answer (the checked report) as content. */
async function streamCompletion(deps: ChatRouteDeps, res: Response, s: StreamRun): Promise<void> {
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  const send = (chunk: Omit<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model' | 'system_fingerprint'>) => {
    if (!res.writableEnded) res.write(`data: ${JSON.stringify({ ...s.head, object: 'chat.completion.chunk', ...chunk })}\n\n`);
  };
  const delta = (d: ChatCompletionChunk['choices'][number]['delta'], finish: 'stop' | null = null) =>
    send({ choices: [{ index: 0, delta: d, finish_reason: finish, logprobs: null }] });
  send({
    choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }],
    deep_research: runRef(s.links, 'running'),
  });
  let content: string;
  let usage: ReturnType<typeof chatUsage>;
  // The report's text as it is written, then what the finished run adds (src/api/chat/draft.ts).
  const draft = new ChatDraft();
  try {
    const end = await followRun(s.links.runId, deps.follow, {
      ended: s.ended,
      signal: s.signal,
      tickMs: deps.follow.heartbeatMs ?? 15_000,
      onTick: () => void (res.writableEnded || res.write(': keep-alive\n\n')),
      onEvent: (e) => {
        const line = progressLine(e);
        if (line) delta({ reasoning_content: `${line}\n` });
        const text = draft.take(e);
        if (text) delta({ content: text });
      },
    });
    if (end === 'left') return void res.end();
    const answer = await finalAnswer(deps.research, s.links, s.tenant, end);
    content = draft.ending(answer.content);
    usage = chatUsage(answer.view);
  } catch (err) {
    // The stream has begun: the failure (PostgreSQL or Temporal gone) is told in the answer; the run goes on.
    content = `Following the run failed (${summarize(failureMessage(err), 200)}); it goes on.${footer(s.links)}`;
  }
  if (content) delta({ content });
  delta({}, 'stop');
  if (s.body.stream_options?.include_usage) send({ choices: [], usage: usage ?? null });
  res.write('data: [DONE]\n\n');
  res.end();
}

/** Errors of these routes in OpenAI's shape (clients read error.message; `param` names the field),
 *  mounted by app.ts for everything on their paths: the key check and the body's parsing and
 *  cleaning come before the router. A 429 and a 5xx keep the API's own shape (Retry-After). */
export const openAiErrors: ErrorRequestHandler = (err, _req, res, next) => {
  if (res.headersSent) return next(err);
  if ((err?.type === 'entity.parse.failed' || err?.type === 'entity.too.large') && typeof err.status === 'number') {
    const body: OpenAiErrorBody = {
      error: {
        message: err.status === 413 ? 'request body is too large' : `request body is not valid JSON: ${String(err.message)}`,
        type: 'invalid_request_error',
        param: null,
        code: err.status === 413 ? 'payload_too_large' : 'invalid_json',
      },
    };
    return void res.status(err.status).json(body);
  }
  if (err instanceof ZodError) {
    const first = err.issues[0];
    const body: OpenAiErrorBody = {
      error: {
        message: err.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
        type: 'invalid_request_error',
        param: first?.path.length ? first.path.join('.') : null,
        code: 'invalid_request',
      },
    };
    return void res.status(400).json(body);
  }
  if (err instanceof ApiError && err.status < 500 && err.status !== 429) {
    const param = (err.details as { param?: unknown } | undefined)?.param;
    const body: OpenAiErrorBody = {
      error: {
        message: err.message,
        type: err.status === 401 ? 'authentication_error' : 'invalid_request_error',
        param: typeof param === 'string' ? param : null,
        code: err.code,
      },
    };
    return void res.status(err.status).json(body);
  }
  next(err);
};
