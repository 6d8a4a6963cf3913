// The HTTP contract in one place: what the routes validate requests with and what they answer,
// as zod schemas, imported by the API, the CLI, the web page and the tests. Each route declares
// which of them it takes and answers beside its handler (src/api/routes/), and the OpenAPI
// document (src/api/openapi.ts) is assembled from those declarations.
import { z } from 'zod';
import { AnswerClarification, ApprovePlan, Grounding, ResearchView, ReviewAnswer, RevisePlan, Steer } from '../shared/messages';
import { Duration, Outcome, Phase, ResearchRequest, RunStatus, Usage } from '../shared/schemas';
import { RewriteOptions, VersionStatus } from '../shared/report-versions';
import { CollectionId, CollectionView, DocumentId, DocumentView, SessionId } from '../shared/knowledge';
import { DOMAIN_PATTERN } from '../shared/domains';
import { ReportDoc } from '../shared/report-doc';
import { FactCategory, FactId, FactText, MemoryFact, UserId } from '../shared/memory';
import { NotifyWhen, RunChanges } from '../shared/changes';
import { RunEventEntry } from '../shared/events';

export const IdempotencyKey = z.string().regex(/^[\x21-\x7e]{1,200}$/, 'Idempotency-Key must be 1-200 visible ASCII characters');
export const RunId = z.string().regex(/^[A-Za-z0-9._:/-]{1,200}$/, 'not a valid research id');
export const SourceId = z.string().regex(/^S[0-9a-f]{8}$/, 'not a valid source id');
export const SourceView = z.object({
  sourceId: z.string(),
  title: z.string(),
  url: z.string(),
  provider: z.string(),
  evidence: z.string(),
});
export type SourceView = z.infer<typeof SourceView>;
export const ArtifactId = z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'not a valid artifact id');

export const SubmitBody = ResearchRequest;
export const ApproveBody = ApprovePlan.strict();
export const ReviseBody = RevisePlan.strict();
export const ClarificationBody = AnswerClarification.strict();
/** `POST /v1/research/:id/steer`: one steering message (see Steer). */
export const SteerBody = Steer;

export const ScheduleId = z.string().regex(/^schedule-[0-9a-f]{32}$/, 'not a valid schedule id');
/**
 * `POST /v1/schedules`: a research request that runs again and again, on a cron expression or
 * every given interval. Its runs accept their plan unless options.autoAcceptPlan is false.
 */
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Nobody reviews a plan at 3 a.m.: a schedule's runs accept theirs unless the options say otherwise. */
const acceptPlansByDefault = (b: unknown) =>
  isRecord(b) && (b.options === undefined || isRecord(b.options)) ? { ...b, options: { autoAcceptPlan: true, ...(b.options ?? {}) } } : b;
const ScheduleFields = z
  .object({
    ...ResearchRequest.shape,
    cron: z
      .string()
      .trim()
      .regex(/^(\S+\s+){4}\S+$/, 'cron must have five fields: minute hour day-of-month month day-of-week')
      .optional(),
    every: Duration.optional(),
    timezone: z.string().max(64).trim().min(1).optional().describe('IANA time zone of a cron expression, e.g. Europe/Berlin (default UTC)'),
    paused: z.boolean().optional(),
    note: z.string().max(500).optional(),
    notify: NotifyWhen.optional().describe(
      "when the runs call options.webhook with report_ready: always (default), or on_change: only when the report found a new source or a changed claim or figure since the schedule's previous report, with what changed in data.changes",
    ),
  })
  .strict()
  .refine((b) => (b.cron === undefined) !== (b.every === undefined), 'give exactly one of cron and every')
  .refine((b) => b.timezone === undefined || b.cron !== undefined, 'timezone applies to cron only');
export const ScheduleBody = z.preprocess(acceptPlansByDefault, ScheduleFields);
export type ScheduleBody = z.infer<typeof ScheduleBody>;
export const ScheduleNote = z.object({ note: z.string().max(500).optional() }).strict();

export const ReportFormat = z
  .enum(['markdown', 'md', 'json', 'html', 'pdf', 'docx', 'pptx'], { message: 'format must be md, json, html, pdf, docx or pptx' })
  .transform((f) => (f === 'md' ? 'markdown' : f));
export const ListQuery = z
  .object({
    status: RunStatus.optional(),
    phase: Phase.optional(),
    since: z.iso
      .datetime({ offset: true, message: 'since must be an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z' })
      .transform((v) => new Date(v))
      .optional(),
    q: z.string().max(200, 'q must be at most 200 characters').trim().optional(),
    cursor: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,4000}$/, 'cursor is not one this API gave out')
      .optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();
/** A string that holds JSON of `schema` (JSON Schema's contentMediaType and contentSchema): a server-sent event's data.
 *  Described as input (fields it does not name are let through), as a client should read it. */
function jsonText(schema: z.ZodType) {
  const { $schema: _, ...contentSchema } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return z.string().meta({ contentMediaType: 'application/json', contentSchema });
}

/** One event of GET /v1/research/:id/events as an SSE client reads it: its type, its number in the run's log, its data. */
export const RunEventMessage = z.union(
  RunEventEntry.options.map((o) =>
    z.object({
      event: o.shape.type,
      id: z.string().regex(/^\d+$/),
      data: jsonText(z.intersection(o.shape.data, z.object({ at: z.iso.datetime() }))),
    }),
  ),
);
export const LastEventId = z.preprocess(
  // Number('') is 0: a blank value would read as "from the start" where it names no event.
  (v) => (typeof v === 'string' && v.trim() === '' ? Number.NaN : v),
  z.coerce.number({ message: 'Last-Event-ID must be an event id' }).int().min(0),
);
/** `GET /v1/collections/:id/documents/:docId?include=chunks` adds the document's passages. */
export const DocumentInclude = z.enum(['chunks']);
/** `POST /v1/collections/:id/documents` as multipart/form-data (the other way is AddDocumentUrlBody). */
export const UploadForm = z.object({ file: z.string().meta({ contentEncoding: 'binary' }), name: z.string().optional() });

// ---- parameters, by where they travel (a property's description is the parameter's) -------------

export const IdempotencyHeader = z.object({
  'Idempotency-Key': IdempotencyKey.optional().describe('a retry with the same key gets the first answer'),
});
export const RunPath = z.object({ id: RunId.describe('the run id') });
export const SchedulePath = z.object({ id: ScheduleId.describe('the schedule id') });
export const CollectionPath = z.object({ id: CollectionId.describe('the collection id') });
export const DocumentPath = CollectionPath.extend({ docId: DocumentId.describe('the document id') });
export const SessionPath = z.object({ id: SessionId.describe('the session id') });

// ---- answers -----------------------------------------------------------------------------------

export const Started = z.object({ id: z.string(), status: RunStatus });
export type Started = z.infer<typeof Started>;
export const ListedRun = z.object({
  id: z.string(),
  status: RunStatus,
  phase: Phase.optional(),
  question: z.string(),
  startedAt: z.string().optional(),
  closedAt: z.string().optional(),
  steps: z.number().int().optional(),
});
export type ListedRun = z.infer<typeof ListedRun>;
export const RunList = z.object({ runs: z.array(ListedRun), nextCursor: z.string().optional() });
export type RunList = z.infer<typeof RunList>;
export const ReviewAnswered = ReviewAnswer.extend({ id: z.string() });
export type ReviewAnswered = z.infer<typeof ReviewAnswered>;
export const ClarificationAnswered = z.object({ id: z.string(), accepted: z.literal(true) });
export type ClarificationAnswered = z.infer<typeof ClarificationAnswered>;
export const SteerAnswered = z.object({
  id: z.string(),
  kind: z.enum(['guidance', 'banDomains', 'mustRead', 'wrapUp', 'addStep', 'dropStep', 'editStep']),
  accepted: z.literal(true),
  planVersion: z.number().int().optional(),
});
export type SteerAnswered = z.infer<typeof SteerAnswered>;
export const Accepted = z.object({ id: z.string(), accepted: z.string() });
export type Accepted = z.infer<typeof Accepted>;
/** `POST /v1/research/:id/report`: a new version of a finished run's report, from the same findings. */
export const RewriteBody = RewriteOptions;
export type RewriteBody = z.infer<typeof RewriteBody>;
export const RewriteStarted = z.object({ id: z.string(), version: z.number().int(), status: VersionStatus });
export type RewriteStarted = z.infer<typeof RewriteStarted>;
/** A report version: 1 is the run's own report (its usage is the run's); 2 and up are rewrites, each with its own usage. */
export const ReportVersionView = z.object({
  version: z.number().int(),
  status: VersionStatus,
  options: z.record(z.string(), z.unknown()).describe('what the rewrite asked for (version 1: none)'),
  title: z.string().optional(),
  createdAt: z.string(),
  usage: Usage.optional(),
  error: z.string().optional(),
});
export type ReportVersionView = z.infer<typeof ReportVersionView>;
export const ReportVersionList = z.object({ id: z.string(), versions: z.array(ReportVersionView) });
export type ReportVersionList = z.infer<typeof ReportVersionList>;
/** `?version=N` of the report routes: absent, version 1 (the run's own report). */
export const ReportVersion = z.coerce.number().int().min(1).max(1_000_000).describe("the report version; unset: 1, the run's own report");
export const ScheduleView = z.object({
  id: z.string(),
  question: z.string(),
  cron: z.string().optional(),
  every: z.string().optional(),
  timezone: z.string().optional(),
  paused: z.boolean(),
  note: z.string().optional(),
  notify: NotifyWhen,
  createdAt: z.string().optional(),
  /** Runs it started, and starts it skipped because a run was still going (overlap policy skip). */
  runsStarted: z.number().int(),
  runsSkipped: z.number().int(),
  nextRunsAt: z.array(z.string()),
  recentRuns: z.array(
    z.object({
      id: z.string(),
      scheduledAt: z.string().optional(),
      startedAt: z.string().optional(),
      /** What the run's report found changed since the schedule's previous one (absent: no comparison yet, or a first report). */
      changes: RunChanges.optional(),
    }),
  ),
  running: z.array(z.string()),
});
export type ScheduleView = z.infer<typeof ScheduleView>;
export const ScheduleList = z.object({
  schedules: z.array(
    ScheduleView.pick({ id: true, question: true, cron: true, every: true, paused: true, notify: true, nextRunsAt: true }),
  ),
});
export type ScheduleList = z.infer<typeof ScheduleList>;
export const ReportJson = z.object({
  id: z.string(),
  title: z.string(),
  locale: z.string().optional(),
  markdown: z.string(),
  /** The executive summary at the top of the report, as in the Markdown (absent for reports written before it). */
  summary: z.string().optional(),
  /** The report as data, which the Markdown and every other format are rendered from: title, notes
   *  (with their kind: the run's, a fallback taken, what grounding removed), sections, charts and
   *  references. A report written before reports were kept as data is one section of its Markdown. */
  doc: ReportDoc,
  references: z.array(z.object({ n: z.number().int(), sourceId: z.string().optional(), title: z.string(), url: z.string() }).loose()),
  removedCitations: z.array(z.unknown()),
  /** Links and bare URLs to addresses the run never retrieved, removed from the text, with the reason. */
  removedLinks: z.array(z.object({ url: z.string(), reason: z.string() })).optional(),
  /** What the claim check found (absent for reports written before it existed). */
  grounding: Grounding.optional(),
  /** Citations the claim check removed (not supported by the source) or flagged (partly supported). */
  citationChecks: z
    .array(
      z.object({
        n: z.number().int(),
        sourceId: z.string(),
        claim: z.string(),
        verdict: z.enum(['partial', 'unsupported']),
        reason: z.string(),
        action: z.enum(['flagged', 'removed']),
      }),
    )
    .optional(),
});
export type ReportJson = z.infer<typeof ReportJson>;
export const ArtifactList = z.object({
  id: z.string(),
  artifacts: z.array(
    z
      .object({
        artifactId: z.string(),
        stepId: z.string(),
        name: z.string(),
        contentType: z.string(),
        size: z.number().int(),
        url: z.string(),
      })
      .loose(),
  ),
});
export type ArtifactList = z.infer<typeof ArtifactList>;
export const CollectionList = z.object({ collections: z.array(CollectionView) });
export type CollectionList = z.infer<typeof CollectionList>;
export const DocumentList = z.object({ documents: z.array(DocumentView) });
export type DocumentList = z.infer<typeof DocumentList>;
/** A document; with `?include=chunks`, its passages in order. */
export const DocumentDetail = DocumentView.extend({
  chunkList: z
    .array(z.object({ seq: z.number().int(), page: z.number().int().nullable(), headingPath: z.array(z.string()), text: z.string() }))
    .optional()
    .describe('only with ?include=chunks: the passages in order'),
});
export type DocumentDetail = z.infer<typeof DocumentDetail>;
export const Deleted = z.object({ id: z.string(), deleted: z.literal(true) });
export type Deleted = z.infer<typeof Deleted>;
export const Liveness = z.object({ status: z.literal('ok') });
export const Readiness = z.object({
  status: z.enum(['ready', 'not_ready']),
  checks: z.record(z.string(), z.object({ ok: z.boolean(), error: z.string().optional() })),
});
export type Readiness = z.infer<typeof Readiness>;
export const ErrorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

// ---- search preferences (GET/PUT /v1/search-preferences) ---------------------------------------

const ProviderName = z.string().regex(/^[a-z][a-z0-9-]{1,31}$/, 'not a provider name');
const PreferenceDomain = z.string().trim().toLowerCase().regex(DOMAIN_PATTERN, 'a domain such as "example.com" (no scheme, port or path)');
/** A tenant's search preferences; PUT replaces them whole. */
export const SearchPreferencesBody = z
  .object({
    providers: z
      .array(ProviderName)
      .min(1)
      .max(12)
      .nullable()
      .optional()
      .describe("the providers the tenant's runs use (a subset of the configured ones); absent or null: all configured"),
    preferDomains: z.array(PreferenceDomain).max(50).default([]).describe('domains (and subdomains) whose results rank higher'),
    avoidDomains: z
      .array(PreferenceDomain)
      .max(50)
      .default([])
      .describe("domains (and subdomains) whose results are dropped unless nothing else is found (a run's bans stay hard)"),
  })
  .strict()
  .refine((p) => !p.preferDomains.some((d) => p.avoidDomains.includes(d)), 'a domain cannot be both preferred and avoided');
export type SearchPreferencesBody = z.infer<typeof SearchPreferencesBody>;
export const SearchPreferencesView = z.object({
  tenant: z.string(),
  providers: z.array(z.string()).optional().describe('absent: every configured provider'),
  preferDomains: z.array(z.string()),
  avoidDomains: z.array(z.string()),
  updatedAt: z.string().optional().describe('absent while the tenant has stored none'),
  configuredProviders: z.array(z.string()).describe('the providers this server has (SEARCH_PROVIDERS)'),
});
export type SearchPreferencesView = z.infer<typeof SearchPreferencesView>;

/** `GET /v1/memory`, `DELETE /v1/memory`: whose memory (absent: the caller's own, see Caller in auth.ts). */
export const MemoryQuery = z
  .object({
    userId: UserId.optional().describe(
      "the user whose memory; absent: the key's owner (`default` without a key); another user of the tenant: admin keys only (403 otherwise)",
    ),
  })
  .strict();
export const FactPath = z.object({ factId: FactId.describe('the fact id') });
/** `PATCH /v1/memory/:factId`: a corrected text, category or both. */
export const FactPatch = z
  .object({ text: FactText.optional(), category: FactCategory.optional() })
  .strict()
  .refine((b) => b.text !== undefined || b.category !== undefined, 'give text, category or both');
export type FactPatch = z.infer<typeof FactPatch>;
export const MemoryView = z.object({
  tenant: z.string(),
  userId: z.string(),
  enabled: z
    .boolean()
    .describe("false when this request's key has memory off (--no-memory, or turned off later): its runs neither use nor teach memory"),
  facts: z.array(MemoryFact).describe('oldest first, each with the quotes it was learned from'),
});
export type MemoryView = z.infer<typeof MemoryView>;
export { MemoryFact };
export const FactDeleted = z.object({ id: z.string(), deleted: z.literal(true) });
export type FactDeleted = z.infer<typeof FactDeleted>;
export const MemoryForgotten = z.object({ userId: z.string(), deleted: z.number().int().describe('how many facts were deleted') });
export type MemoryForgotten = z.infer<typeof MemoryForgotten>;

export { Outcome, ResearchView };
