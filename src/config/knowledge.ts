// The knowledge base: uploads, parsing caps, chunking, and the OpenAI-compatible /embeddings endpoint.
import { z } from 'zod';
import { area, int, optionalString, optionalUrl } from './setting-kit';

const knowledgeSettings = {
  EMBEDDING_MODEL: z.string().min(1).default('text-embedding-3-small').describe('model of the OpenAI-compatible `/embeddings` endpoint'),
  EMBEDDING_BASE_URL: optionalUrl.describe(
    'the embeddings endpoint; unset: `OPENAI_BASE_URL`. With no endpoint or key at all, retrieval is full text only',
  ),
  EMBEDDING_API_KEY: optionalString.describe("the embeddings endpoint's key; unset: `OPENAI_API_KEY`"),
  EMBEDDING_DIMENSIONS: int(1, 16_000).optional().describe('dimensions asked of the embedding model (optional)'),
  EMBEDDING_BATCH: int(1, 2_048).default(64).describe('chunks per `/embeddings` request (four requests at a time)'),
  KB_MAX_FILE_BYTES: int(1_000, 1_000_000_000).default(25_000_000).describe('largest document a collection takes (`413` above it)'),
  KB_MAX_DOCUMENTS: int(1, 1_000_000).default(1_000).describe('documents per collection (`413` above it)'),
  KB_CHUNK_TOKENS: int(50, 8_000).default(350).describe('tokens per chunk (whole sentences, with the heading path)'),
  KB_CHUNK_OVERLAP: int(0, 2_000).default(50).describe('tokens neighbouring chunks share (at most half of `KB_CHUNK_TOKENS`)'),
  KB_PARSE_THREADS: int(1, 16).default(1).describe('documents parsed at once, each on a thread of its own'),
  KB_PARSE_MEMORY_MB: int(64, 16_384)
    .default(512)
    .describe("memory (heap and buffers) one document's parse thread may hold; past it the document fails"),
  KB_PARSE_TIMEOUT_MS: int(1_000, 540_000).default(120_000).describe("wall time one document's parse may take; past it the document fails"),
  KB_PARSE_MAX_INFLATED_MB: z.coerce
    .number()
    .min(1)
    .max(16_384)
    .default(200)
    .describe('bytes, in MB, a document may decompress to (Office ZIP entries, PDF streams each time they are decoded)'),
  KB_PARSE_MAX_PAGES: int(1, 1_000_000).default(2_000).describe('pages of a PDF, slides of a PPTX'),
  KB_PARSE_MAX_SHEETS: int(1, 100_000).default(100).describe('worksheets of an XLSX'),
  KB_PARSE_MAX_ROWS: int(1, 10_000_000).default(100_000).describe('rows of one worksheet or CSV file'),
  KB_PARSE_MAX_COLUMNS: int(1, 100_000).default(1_000).describe('columns of one row (XLSX, CSV)'),
  KB_PARSE_MAX_ZIP_ENTRIES: int(10, 1_000_000).default(10_000).describe('files inside an Office document'),
  KB_PARSE_MAX_CHARS: int(1_000, 100_000_000)
    .default(2_000_000)
    .describe("characters of a document's text that are kept (the rest is cut, not refused)"),
};

export const knowledgeArea = area(
  'Knowledge base',
  knowledgeSettings,
  /** Embeddings use the LLM endpoint and key unless EMBEDDING_* name their own. */
  (v, llm: { apiKey: string | undefined; baseUrl: string | undefined; timeoutMs: number }) => ({
    knowledge: {
      embedding: {
        /** False when no endpoint is configured at all: retrieval is full-text only, and says so. */
        enabled: Boolean(v.EMBEDDING_BASE_URL || v.EMBEDDING_API_KEY || llm.baseUrl || llm.apiKey),
        model: v.EMBEDDING_MODEL,
        baseUrl: v.EMBEDDING_BASE_URL ?? llm.baseUrl,
        apiKey: v.EMBEDDING_API_KEY ?? llm.apiKey,
        dimensions: v.EMBEDDING_DIMENSIONS,
        /** Chunks per /embeddings request (one activity each). */
        batch: v.EMBEDDING_BATCH,
        timeoutMs: llm.timeoutMs,
      },
      maxFileBytes: v.KB_MAX_FILE_BYTES,
      /** Documents per collection. */
      maxDocuments: v.KB_MAX_DOCUMENTS,
      chunkTokens: v.KB_CHUNK_TOKENS,
      chunkOverlap: Math.min(v.KB_CHUNK_OVERLAP, Math.floor(v.KB_CHUNK_TOKENS / 2)),
      /** Parsing on threads of their own, within these caps (KB_PARSE_*); past one a document fails
       *  (src/activities/knowledge/parse-thread.ts, parse-caps.ts). */
      parse: {
        threads: v.KB_PARSE_THREADS,
        memoryMb: v.KB_PARSE_MEMORY_MB,
        timeoutMs: v.KB_PARSE_TIMEOUT_MS,
        caps: {
          /** Bytes a document may decompress to in total: ZIP entries, PDF streams (decoded, summed
           *  over every decoding, so one stream shared by many pages counts once per page). */
          maxInflatedBytes: Math.round(v.KB_PARSE_MAX_INFLATED_MB * 1_000_000),
          /** Pages of a PDF, slides of a deck. */
          maxPages: v.KB_PARSE_MAX_PAGES,
          /** Worksheets of a workbook. */
          maxSheets: v.KB_PARSE_MAX_SHEETS,
          /** Rows of one sheet or CSV file. */
          maxRows: v.KB_PARSE_MAX_ROWS,
          /** Columns of one row. */
          maxColumns: v.KB_PARSE_MAX_COLUMNS,
          /** Entries in a ZIP (Office) file. */
          maxZipEntries: v.KB_PARSE_MAX_ZIP_ENTRIES,
          /** Characters of text kept (the rest is cut, not refused). */
          maxChars: v.KB_PARSE_MAX_CHARS,
        },
      },
    },
  }),
);
