-- A researcher step's findings show the charts its python calls kept: its sandbox runs are read
-- by research, step and run number.
CREATE INDEX sandbox_runs_step ON sandbox_runs (research_id, step_id, attempt);
