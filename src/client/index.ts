// A typed client of the HTTP API for TypeScript programs, the CLI, the MCP server and the web page:
// one named method per route, typed by the contract (src/api/contract.ts and src/shared), errors as
// ClientError, and a run's events as a stream that resumes with Last-Event-ID. The API's paths are
// written here and nowhere else outside the server; test/unit/client-routes.test.ts checks each
// method's method and path against the routes' own specs. Only types come from the server's
// modules, so a browser bundle carries none of their code (nor zod); fetch is all it needs.
import type { z } from 'zod';
import type {
  Accepted,
  ArtifactList,
  ClarificationAnswered,
  CollectionList,
  Deleted,
  DocumentDetail,
  DocumentList,
  FactDeleted,
  FactPatch,
  MemoryFact,
  MemoryForgotten,
  MemoryView,
  ReportJson,
  ReportVersionList,
  ReviewAnswered,
  RewriteBody,
  RewriteStarted,
  RunList,
  ScheduleBody,
  ScheduleList,
  ScheduleView,
  SearchPreferencesBody,
  SearchPreferencesView,
  SourceView,
  Started,
  SteerAnswered,
} from '../api/contract';
import type { ResearchView, SteerInput } from '../shared/messages';
import type { PlanEdit } from '../shared/update-schemas';
import type { KeyMemorySet, KeyRevoked, OwnKeys } from '../api/routes/keys';
import type {
  CollectionSearchBody,
  CollectionSearchResult,
  CollectionView,
  CreateCollectionBody,
  DocumentView,
  SessionList,
  SessionView,
} from '../shared/knowledge';
import type { Phase, ResearchRequest, RunStatus } from '../shared/schemas';
import type { RunEvent } from '../shared/events';
import { followEvents, type FollowOptions } from './events';
import { ClientError, http, type ClientOptions, type Http } from './http';

export { ClientError, type ClientOptions, type FollowOptions };
/** A run's draft as its `draft` events build it: each part's text so far. */
export { Draft, draftMarkdown, type DraftPart } from '../shared/draft';
export { costText } from '../shared/cost-text';
export { plural } from '../shared/plural';
export type {
  RunEvent,
  ResearchView,
  ReportJson,
  RunList,
  Started,
  ScheduleView,
  CollectionView,
  CollectionSearchResult,
  DocumentView,
  SessionView,
  SessionList,
  OwnKeys,
  MemoryView,
  MemoryFact,
  ReportVersionList,
  RewriteStarted,
};

/** What `POST /v1/research/:id/report` takes: at least one change. */
export type RewriteRequest = z.input<typeof RewriteBody>;

/** What `POST /v1/research` takes (defaults filled in by the API). */
export type StartRequest = z.input<typeof ResearchRequest>;
/** One edit of a plan under review, as `revise` sends it. */
export type PlanEditInput = z.input<typeof PlanEdit>;
export interface ListRunsQuery {
  status?: RunStatus;
  phase?: Phase;
  since?: string;
  q?: string;
  cursor?: string;
  limit?: number;
}
/** What `POST /v1/schedules` takes: a research request and exactly one of cron and every. */
export type ScheduleRequest = StartRequest & Partial<Pick<ScheduleBody, 'cron' | 'every' | 'timezone' | 'paused' | 'note' | 'notify'>>;
/** Report formats answered as text, as JSON, and as a file. */
export type TextReportFormat = 'markdown' | 'md' | 'html';
export type FileReportFormat = 'pdf' | 'docx' | 'pptx' | 'md' | 'html';

const enc = encodeURIComponent;
const run = (id: string, tail = '') => `/v1/research/${enc(id)}${tail}`;
const collection = (id: string, tail = '') => `/v1/collections/${enc(id)}${tail}`;
const schedule = (id: string, tail = '') => `/v1/schedules/${enc(id)}${tail}`;
const query = (q: object) => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
  return p.size ? `?${p}` : '';
};
const idempotency = (key: string | undefined): Record<string, string> => (key ? { 'idempotency-key': key } : {});

/** The /v1/memory routes. */
function memoryMethods(call: Http['call']) {
  return {
    list: (userId?: string) => call<MemoryView>('GET', `/v1/memory${query({ userId })}`),
    edit: (factId: string, change: FactPatch) => call<MemoryFact>('PATCH', `/v1/memory/${enc(factId)}`, change),
    delete: (factId: string) => call<FactDeleted>('DELETE', `/v1/memory/${enc(factId)}`),
    forgetAll: (userId?: string) => call<MemoryForgotten>('DELETE', `/v1/memory${query({ userId })}`),
  };
}

/** The /v1/research routes: a run, its plan review, steering, report and files. */
function researchMethods(h: Http) {
  const { call } = h;
  return {
    start: (body: StartRequest, o: { idempotencyKey?: string } = {}) =>
      call<Started>('POST', '/v1/research', body, idempotency(o.idempotencyKey)),
    get: (id: string) => call<ResearchView>('GET', run(id)),
    list: (q: ListRunsQuery = {}) => call<RunList>('GET', `/v1/research${query(q)}`),
    approve: (id: string, planVersion: number) => call<ReviewAnswered>('POST', run(id, '/plan/approve'), { planVersion }),
    /** Sends the plan back: feedback for the planner, edits of its steps made as given, or both. */
    revise: (id: string, planVersion: number, feedback: string, edits: PlanEditInput[] = []) =>
      call<ReviewAnswered>('POST', run(id, '/plan/revise'), {
        planVersion,
        ...(feedback ? { feedback } : {}),
        ...(edits.length ? { edits } : {}),
      }),
    answer: (id: string, answer: string) => call<ClarificationAnswered>('POST', run(id, '/clarification'), { answer }),
    steer: (id: string, steer: SteerInput) => call<SteerAnswered>('POST', run(id, '/steer'), steer),
    cancel: (id: string) => call<Accepted>('POST', run(id, '/cancel')),
    /** The report as Markdown (default) or self-contained HTML; `version` (absent: 1, the run's own). */
    report: (id: string, format: TextReportFormat = 'markdown', version?: number) =>
      call<string>('GET', run(id, `/report${query({ format, version })}`)),
    /** The report with its references, grounding and removed citations. */
    reportJson: (id: string, version?: number) => call<ReportJson>('GET', run(id, `/report${query({ format: 'json', version })}`)),
    /** The report as a file: PDF, Word (.docx), slide deck (.pptx), Markdown or HTML. */
    reportFile: (id: string, format: FileReportFormat, version?: number) => h.blob(run(id, `/report${query({ format, version })}`)),
    /** A new version of the finished run's report from the same findings (another length, language, audience...). */
    rewrite: (id: string, body: RewriteRequest, o: { idempotencyKey?: string } = {}) =>
      call<RewriteStarted>('POST', run(id, '/report'), body, idempotency(o.idempotencyKey)),
    /** The run's report versions: 1 is its own, then its rewrites with their status and usage. */
    versions: (id: string) => call<ReportVersionList>('GET', run(id, '/reports')),
    source: (id: string, sourceId: string) => call<SourceView>('GET', run(id, `/sources/${enc(sourceId)}`)),
    artifacts: (id: string) => call<ArtifactList>('GET', run(id, '/artifacts')),
    artifact: (id: string, artifactId: string) => h.blob(run(id, `/artifacts/${enc(artifactId)}`)),
  };
}

export function createClient(options: ClientOptions) {
  const h = http(options);
  const { call } = h;
  return {
    /** A link an answer of the API gave (a chart's or a kept file's `url`), as a Blob. */
    download: (url: string) => h.blob(url),
    /** Paths for callers that must send a request themselves (an upload that reports its progress). */
    paths: {
      documents: (collectionId: string) => collection(collectionId, '/documents'),
      /** Where a run's kept files are: a report's charts link below it. */
      artifacts: (runId: string) => run(runId, '/artifacts/'),
    },
    /**
     * The run's events after `after` (default 0), in order, each once; resumes after a dropped
     * connection with Last-Event-ID; ends after `done`, or without an error once `signal` aborts.
     */
    events: (id: string, o: FollowOptions | number = {}, signal?: AbortSignal) =>
      followEvents(h, id, typeof o === 'number' ? { after: o, ...(signal ? { signal } : {}) } : o),

    research: researchMethods(h),

    collections: {
      list: () => call<CollectionList>('GET', '/v1/collections'),
      get: (id: string) => call<CollectionView>('GET', collection(id)),
      create: (body: z.input<typeof CreateCollectionBody>) => call<CollectionView>('POST', '/v1/collections', body),
      delete: (id: string) => call<Deleted>('DELETE', collection(id)),
      documents: (id: string) => call<DocumentList>('GET', collection(id, '/documents')),
      document: (id: string, docId: string, o: { chunks?: boolean } = {}) =>
        call<DocumentDetail>('GET', collection(id, `/documents/${enc(docId)}${o.chunks ? '?include=chunks' : ''}`)),
      /** Uploads a file (a File in a page, a Blob with a name in Node); `duplicate` when it was there. */
      upload: (id: string, file: Blob, name?: string) => {
        const form = new FormData();
        form.append('file', file, name ?? (file as Partial<File>).name ?? 'upload');
        return call<DocumentView>('POST', collection(id, '/documents'), form);
      },
      addUrl: (id: string, url: string, name?: string) =>
        call<DocumentView>('POST', collection(id, '/documents'), { url, ...(name ? { name } : {}) }),
      documentFile: (id: string, docId: string) => h.blob(collection(id, `/documents/${enc(docId)}/file`)),
      deleteDocument: (id: string, docId: string) => call<Deleted>('DELETE', collection(id, `/documents/${enc(docId)}`)),
      /** The collection's passages for a query, best first, as a run's knowledge_search finds them. */
      search: (id: string, body: z.input<typeof CollectionSearchBody>) =>
        call<CollectionSearchResult>('POST', collection(id, '/search'), body),
    },

    sessions: {
      list: () => call<SessionList>('GET', '/v1/sessions'),
      create: (title = '') => call<SessionView>('POST', '/v1/sessions', { title }),
      get: (id: string) => call<SessionView>('GET', `/v1/sessions/${enc(id)}`),
    },

    schedules: {
      list: () => call<ScheduleList>('GET', '/v1/schedules'),
      get: (id: string) => call<ScheduleView>('GET', schedule(id)),
      create: (body: ScheduleRequest) => call<ScheduleView>('POST', '/v1/schedules', body),
      pause: (id: string, note?: string) => call<ScheduleView>('POST', schedule(id, '/pause'), note ? { note } : {}),
      resume: (id: string, note?: string) => call<ScheduleView>('POST', schedule(id, '/resume'), note ? { note } : {}),
      trigger: (id: string) => call<ScheduleView>('POST', schedule(id, '/trigger')),
      delete: (id: string) => call<Accepted>('DELETE', schedule(id)),
    },

    /** The caller's tenant's stored keys (never their secrets); revoking one stops it at once. */
    keys: {
      list: () => call<OwnKeys>('GET', '/v1/keys/self'),
      revoke: (keyId: string) => call<KeyRevoked>('DELETE', `/v1/keys/self/${enc(keyId)}`),
      /** Off: the key's requests neither use nor teach user memory. */
      setMemory: (keyId: string, memory: boolean) => call<KeyMemorySet>('PATCH', `/v1/keys/self/${enc(keyId)}`, { memory }),
    },

    /** What the service remembers about a user (absent userId: the caller's own), with the
     *  quotes each fact came from; a deleted fact is never learned again from them. */
    memory: memoryMethods(call),

    searchPreferences: {
      get: () => call<SearchPreferencesView>('GET', '/v1/search-preferences'),
      put: (body: z.input<typeof SearchPreferencesBody>) => call<SearchPreferencesView>('PUT', '/v1/search-preferences', body),
    },
  };
}

export type Client = ReturnType<typeof createClient>;
