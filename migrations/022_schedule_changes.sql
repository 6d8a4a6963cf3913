-- What a scheduled run's comparison with the schedule's previous report found (new sources,
-- changed claims and figures, as src/shared/changes.ts RunChanges): the schedule's recent runs
-- show it, and an `on_change` schedule alerts only when it names a change. NULL: a first report,
-- or a run recorded before this column existed.
ALTER TABLE scheduled_reports ADD COLUMN changes jsonb;
