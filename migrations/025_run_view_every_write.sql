-- research_runs.final_view now holds the run's status view as of the row's last write, terminal or
-- not: a run started on code with the `row-keeps-view` change writes it with every write, after
-- every change of the view, and the API answers GET /v1/research/:id for the open run from it (a
-- status query costs a workflow task on a worker). The name stays, so workers of the previous
-- release keep writing it during a rolling deploy; they send it with their last write only.
COMMENT ON COLUMN research_runs.final_view IS 'the run''s status view as of the row''s last write (the getStatus query''s answer at that write)';
