-- The run's status view as its last write left it (what the `getStatus` query answers once the run
-- has ended, with the usage of the request log): the API answers GET for an ended run from here
-- instead of asking a worker to replay the run's whole history for a query.
ALTER TABLE research_runs ADD COLUMN final_view jsonb;
