// A run's search settings (bans, time range, provider choice, the tenant's preferences), read once
// for a round of searches and page reads run side by side in one activity (a researcher turn's tool
// round, a stage of the background phase) instead of once by each: every search and page read of
// the round sees the settings as they were when the round began, as it would have had it read them
// itself a moment earlier. A ban or preference that arrives later reaches the next round. Outside a
// round, each caller reads them as before.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunSearchSettings } from './store';

interface SettingsReader {
  settings(researchId: string): Promise<RunSearchSettings>;
}

const round = new AsyncLocalStorage<Map<string, Promise<RunSearchSettings>>>();

/** Runs `fn` as one round: the settings its searches and page reads ask for are read once a run. */
export function oneSettingsRead<T>(fn: () => Promise<T>): Promise<T> {
  return round.run(new Map(), fn);
}

/** The run's settings: the round's read, when called inside one (a failed read is not kept). */
export function runSettings(bans: SettingsReader, researchId: string): Promise<RunSearchSettings> {
  const kept = round.getStore();
  if (!kept) return bans.settings(researchId);
  let read = kept.get(researchId);
  if (!read) {
    read = bans.settings(researchId);
    kept.set(researchId, read);
    read.catch(() => kept.delete(researchId));
  }
  return read;
}
