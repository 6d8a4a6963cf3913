-- Pages a run has read, by URL hash: a second read of the same URL in the same run is free.
CREATE TABLE pages (
  research_id  text NOT NULL,
  url_hash     text NOT NULL,
  url          text NOT NULL,
  final_url    text NOT NULL,
  content_type text NOT NULL,
  title        text NOT NULL DEFAULT '',
  markdown     text NOT NULL,
  fetched_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, url_hash)
);
