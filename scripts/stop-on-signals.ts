// What a script that serves something until Ctrl-C does on SIGINT or SIGTERM: stop it once, then exit.
/** Stops the server on the first SIGINT or SIGTERM and exits 0; returns whether a stop was asked. */
export function stopOnSignals(stop: () => Promise<void>): () => boolean {
  let stopping = false;
  const onSignal = (): void => {
    if (stopping) return;
    stopping = true;
    void stop().then(() => process.exit(0));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => stopping;
}
