// The PostgreSQL store: the one home of the service's SQL (migrations aside), used by activities
// and by the API. Every write is an upsert keyed by a stable id, so an activity that runs twice
// (a retry after a lost completion) leaves one row, not two.
import type pg from 'pg';
import { conversationsTable } from './conversations';
import { documentTables } from './documents';
import { apiKeysTable } from './keys';
import { eventsTable } from './events';
import { idempotencyKeysTable } from './idempotency-keys';
import { knowledgeTables } from './knowledge';
import { memoryTable } from './memory';
import { reportVersionsTable } from './report-versions';
import { scheduledReportsTable } from './schedules';
import { searchPreferencesTable } from './search-preferences';
import { bansTable, guidanceTable, llmCallsTable, llmLeasesTable, runsTable, sandboxRunsTable } from './runs';

export type { Message } from './conversations';
export type { ArtifactRecord, ReportBasis, ReportRecord, StoredDocument, StoredPage, StoredSource } from './documents';
export type { ReportVersionRow, ReportVersionsTable, VersionStatus } from './report-versions';
export type { LlmCallRecord, RunRecord, RunSearchSettings } from './runs';
export type { SearchPreferences, SearchPreferencesTable } from './search-preferences';
export type { ApiKeyRow, ApiKeysTable } from './keys';
export type { EventsTable, NewEvent, StoredEvent } from './events';
export type { IdempotencyKeysTable, KeyClaim } from './idempotency-keys';
export type { EventWakeups, WakeupOptions } from './event-wakeups';
export type * from './knowledge';
export type { ScheduledReport } from './schedules';
export type { MemoryTable } from './memory';

export function createStore(pool: pg.Pool) {
  return {
    runs: runsTable(pool),
    guidance: guidanceTable(pool),
    bans: bansTable(pool),
    llmCalls: llmCallsTable(pool),
    llmLeases: llmLeasesTable(pool),
    sandboxRuns: sandboxRunsTable(pool),
    conversations: conversationsTable(pool),
    apiKeys: apiKeysTable(pool),
    events: eventsTable(pool),
    /** The request each Idempotency-Key was first used for. */
    idempotencyKeys: idempotencyKeysTable(pool),
    scheduledReports: scheduledReportsTable(pool),
    reportVersions: reportVersionsTable(pool),
    searchPreferences: searchPreferencesTable(pool),
    knowledge: knowledgeTables(pool),
    /** What the service remembers about each user (GET /v1/memory). */
    memory: memoryTable(pool),
    ...documentTables(pool),
    /** Readiness: the database answers. */
    async ping(): Promise<void> {
      await pool.query('SELECT 1');
    },
  };
}
export type Store = ReturnType<typeof createStore>;
