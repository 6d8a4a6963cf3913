-- Each new run event wakes the API processes that stream that run: a notification on channel
-- `run_events` with the run's id (PostgreSQL merges repeats within one transaction). A stream
-- reads the log when woken instead of asking every half second; it still reads it now and then in
-- case a notification was lost while its listening connection was down.
CREATE FUNCTION notify_run_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('run_events', NEW.research_id);
  RETURN NULL;
END;
$$;

CREATE TRIGGER run_events_notify AFTER INSERT ON run_events
  FOR EACH ROW EXECUTE FUNCTION notify_run_event();
