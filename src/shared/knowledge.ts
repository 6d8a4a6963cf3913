// The knowledge base's shared vocabulary: ids, a run's retrieval scope, the API's bodies.
import { z } from 'zod';
import { Duration, RetrySettings } from './schemas';

export { KnowledgeScope } from './schemas';

/** 'C' + 16 hex: a collection. */
export const CollectionId = z.string().regex(/^C[0-9a-f]{16}$/, 'not a collection id');
/** 'D' + 16 hex: a collection's document (sha256 of collection and content, or of the URL). */
export const DocumentId = z.string().regex(/^D[0-9a-f]{16}$/, 'not a document id');
/** 'session-' + 16 hex. */
export const SessionId = z.string().regex(/^session-[0-9a-f]{16}$/, 'not a session id');

/** PostgreSQL text search configurations by language code: the stemmer a collection's text gets. */
export const TEXT_SEARCH_LANGUAGES: Record<string, string> = {
  ar: 'arabic',
  da: 'danish',
  de: 'german',
  el: 'greek',
  en: 'english',
  es: 'spanish',
  fi: 'finnish',
  fr: 'french',
  hu: 'hungarian',
  id: 'indonesian',
  it: 'italian',
  nl: 'dutch',
  no: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sv: 'swedish',
  tr: 'turkish',
};

/**
 * Languages PostgreSQL has no configuration for, written without spaces between words: their
 * collections are indexed by character bigrams (src/shared/cjk.ts) over the `simple` configuration.
 * Keyed by ISO 639-1 and -2 codes and their Chinese varieties; the values are what a collection stores.
 */
export const CJK_LANGUAGES: Record<string, 'chinese' | 'japanese' | 'korean'> = {
  zh: 'chinese',
  zho: 'chinese',
  chi: 'chinese',
  cmn: 'chinese',
  yue: 'chinese',
  chinese: 'chinese',
  ja: 'japanese',
  jpn: 'japanese',
  japanese: 'japanese',
  ko: 'korean',
  kor: 'korean',
  korean: 'korean',
};

/** True for a collection language indexed by CJK bigrams. */
export function isCjkLanguage(language: string): boolean {
  return language === 'chinese' || language === 'japanese' || language === 'korean';
}

/**
 * A collection's language as stored: a language code with or without its region or script (en,
 * de-CH, zh-Hant, ja_JP) or name (chinese) mapped, anything else as given (a text search
 * configuration such as 'simple').
 */
export function collectionLanguage(language: string): string {
  const lower = language.trim().toLowerCase();
  const code = lower.split(/[-_]/)[0]!;
  return CJK_LANGUAGES[code] ?? TEXT_SEARCH_LANGUAGES[code] ?? lower;
}

export const CreateCollectionBody = z
  .object({
    name: z.string().max(100, 'name is longer than 100 characters').trim().min(1, 'name must not be empty'),
    description: z.string().max(2_000, 'description is longer than 2000 characters').trim().default(''),
    /** A language code (en, de, zh, ja, ko, ...) or a PostgreSQL text search configuration name ('simple' for none). */
    language: z.string().max(64).trim().min(1).default('english'),
  })
  .strict();
export type CreateCollectionBody = z.infer<typeof CreateCollectionBody>;

export const AddDocumentUrlBody = z
  .object({
    url: z.url({ message: 'url must be an http(s) URL' }).refine((u) => /^https?:\/\//i.test(u), 'url must be an http(s) URL'),
    name: z.string().max(300).trim().min(1).optional(),
  })
  .strict();

export const CreateSessionBody = z
  .object({ title: z.string().max(300, 'title is longer than 300 characters').trim().default('') })
  .strict();

/** Input of the ingestion workflow (its id: `ingest-<documentId>`). */
export const IngestInput = z.object({
  documentId: z.string(),
  tenant: z.string(),
  /** True for a document added by URL: it is fetched first. */
  fetch: z.boolean(),
  /** Chunks per embeddings request, and requests in flight at once. */
  batch: z.number().int().positive(),
  parallel: z.number().int().positive(),
  maxOutage: Duration.optional(),
  retry: RetrySettings.optional(),
});
export type IngestInput = z.infer<typeof IngestInput>;

/** What the ingestion workflow reports while it runs (query `ingestProgress`) and returns. */
export interface IngestProgress {
  documentId: string;
  stage: 'fetching' | 'parsing' | 'embedding' | 'ready' | 'failed';
  chunks: number;
  embedded: number;
  error?: string;
}

// ---- answers of the API (documented in the OpenAPI document) ------------------------------------
export const CollectionView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  language: z.string(),
  documents: z.number().int(),
  chunks: z.number().int(),
  createdAt: z.string(),
});
export type CollectionView = z.infer<typeof CollectionView>;
export const DocumentView = z.object({
  id: z.string(),
  collectionId: z.string().nullable(),
  name: z.string(),
  title: z.string(),
  format: z.string().nullable(),
  size: z.number().int(),
  sourceUrl: z.string().nullable(),
  status: z.enum(['queued', 'fetching', 'parsing', 'embedding', 'ready', 'failed']),
  error: z.string().optional(),
  pages: z.number().int().nullable(),
  chunks: z.number().int(),
  embedded: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  duplicate: z.boolean().optional(),
});
export type DocumentView = z.infer<typeof DocumentView>;
export const SessionView = z.object({
  id: z.string(),
  title: z.string(),
  createdAt: z.string().optional(),
  runs: z
    .array(
      z.object({
        id: z.string(),
        question: z.string(),
        askedAt: z.string(),
        status: z.string().nullable(),
        reportTitle: z.string().nullable(),
      }),
    )
    .optional(),
});
export type SessionView = z.infer<typeof SessionView>;
/** `POST /v1/collections/:id/search`: passages of the collection for a query. */
export const CollectionSearchBody = z
  .object({
    query: z.string().max(500, 'query is longer than 500 characters').trim().min(1, 'query must not be empty'),
    k: z.number().int().min(1).max(20).default(8),
  })
  .strict();
export const CollectionSearchResult = z.object({
  query: z.string(),
  /** How vectors were searched ('pgvector', 'exact'); 'off' or 'unavailable': full text only. */
  vectors: z.string(),
  passages: z.array(
    z.object({
      documentId: z.string(),
      documentTitle: z.string(),
      seq: z.number().int(),
      page: z.number().int().nullable(),
      headingPath: z.array(z.string()),
      text: z.string(),
      score: z.number(),
    }),
  ),
});
export type CollectionSearchResult = z.infer<typeof CollectionSearchResult>;
/** `GET /v1/sessions`: the tenant's sessions, newest first. */
export const SessionList = z.object({
  sessions: z.array(z.object({ id: z.string(), title: z.string(), createdAt: z.string(), runCount: z.number().int() })),
});
export type SessionList = z.infer<typeof SessionList>;
