// Heartbeats that cost nothing when the work is quick. Every heartbeat the SDK sends is a request
// to the Temporal server, which writes the activity's state; the first one of an attempt is sent
// at once. The server times out an attempt that has not heartbeat within its heartbeat timeout
// from its start, so a beat at the start adds nothing to noticing a dead worker: the beats here
// begin a third of the heartbeat timeout in (at most `everyMs`), and a call that is done by then
// (most model calls, most page reads) never asks the server anything.
import { Context } from '@temporalio/activity';

export interface Beat {
  /** What the next beat says (the stage an activity is in, what it waits for). */
  say(details: unknown): void;
  stop(): void;
}

/** Beats every third of the heartbeat timeout (at most `everyMs`, at least 100 ms) until stopped. */
export function startBeat(details?: unknown, everyMs = 3_000): Beat {
  const ctx = Context.current();
  let said = details;
  const every = Math.min(everyMs, Math.max(100, (ctx.info.heartbeatTimeoutMs ?? Infinity) / 3));
  const timer = setInterval(() => (said === undefined ? ctx.heartbeat() : ctx.heartbeat(said)), every);
  return {
    say: (d) => void (said = d),
    stop: () => clearInterval(timer),
  };
}

/** Runs `fn` with a beat that stops when it ends. */
export async function beating<T>(fn: (beat: Beat) => Promise<T>, details?: unknown, everyMs?: number): Promise<T> {
  const beat = startBeat(details, everyMs);
  try {
    return await fn(beat);
  } finally {
    beat.stop();
  }
}
