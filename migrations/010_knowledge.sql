-- The knowledge base: a tenant's collections of uploaded documents, their chunks with a full-text
-- vector and an embedding, and sessions whose reports become searchable memory.

CREATE TABLE sessions (
  session_id text PRIMARY KEY,
  tenant     text NOT NULL,
  title      text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_tenant ON sessions (tenant, created_at DESC);

-- The runs of a session in the order they were asked (the API writes the row when it starts a run).
CREATE TABLE session_runs (
  session_id  text NOT NULL REFERENCES sessions ON DELETE CASCADE,
  research_id text NOT NULL,
  question    text NOT NULL,
  asked_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, research_id)
);

CREATE TABLE kb_collections (
  collection_id text PRIMARY KEY,
  tenant        text NOT NULL,
  name          text NOT NULL,
  description   text NOT NULL DEFAULT '',
  -- A text search configuration (pg_ts_config): stemming and stop words of the documents' language.
  language      text NOT NULL DEFAULT 'english',
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant, name)
);

-- A document of a collection, or a report kept as a session's memory (collection_id null).
-- document_id is stable: the same bytes in the same collection are the same document.
CREATE TABLE kb_documents (
  document_id   text PRIMARY KEY,
  tenant        text NOT NULL,
  collection_id text REFERENCES kb_collections ON DELETE CASCADE,
  session_id    text REFERENCES sessions ON DELETE CASCADE,
  name          text NOT NULL,
  format        text,
  content_type  text,
  source_url    text,
  content_hash  text,
  bytes         bytea,
  size          integer NOT NULL DEFAULT 0,
  -- queued → fetching → parsing → embedding → ready, or failed (with error)
  status        text NOT NULL,
  error         text,
  title         text NOT NULL DEFAULT '',
  pages         integer,
  chunks_total    integer NOT NULL DEFAULT 0,
  chunks_embedded integer NOT NULL DEFAULT 0,
  embedding_model text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX kb_documents_collection ON kb_documents (collection_id, created_at);
CREATE INDEX kb_documents_session ON kb_documents (session_id);

CREATE TABLE kb_chunks (
  document_id   text NOT NULL REFERENCES kb_documents ON DELETE CASCADE,
  seq           integer NOT NULL,
  tenant        text NOT NULL,
  collection_id text,
  session_id    text,
  heading_path  text[] NOT NULL DEFAULT '{}',
  page          integer,
  text          text NOT NULL,
  tokens        integer NOT NULL,
  tsv           tsvector NOT NULL,
  -- The embedding as a plain array works on every PostgreSQL (exact scan); `vec` below is the
  -- same vector for pgvector's HNSW index where the extension exists.
  embedding     real[],
  dims          integer,
  model         text,
  PRIMARY KEY (document_id, seq)
);
CREATE INDEX kb_chunks_tsv ON kb_chunks USING gin (tsv);
CREATE INDEX kb_chunks_collection ON kb_chunks (collection_id);
CREATE INDEX kb_chunks_session ON kb_chunks (session_id);

-- pgvector where it is installed (PGlite loads it; the compose image has it; Debian's PostgreSQL
-- does not): the extension and the `vec` column. Without it, retrieval scans `embedding` exactly.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pgvector is installed but this role may not create it: vectors are scanned exactly';
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
    EXECUTE 'ALTER TABLE kb_chunks ADD COLUMN vec vector';
  END IF;
END
$$;
