// Find: the tenant's runs, filtered by status and words of the question; open or cancel one.
import { useEffect, useState } from 'preact/hooks';
import { client } from './api';
import type { ListedRun } from '../../src/api/contract';
import type { RunStatus } from '../../src/shared/schemas';

const STATUSES: readonly RunStatus[] = ['running', 'awaiting_review', 'completed', 'failed', 'cancelled'];

export function Runs() {
  const [status, setStatus] = useState<RunStatus | ''>('');
  const [q, setQ] = useState('');
  const [runs, setRuns] = useState<ListedRun[] | undefined>();
  const [cursor, setCursor] = useState<string | undefined>();
  const [error, setError] = useState('');

  const load = async (more?: string) => {
    try {
      const r = await client.research.list({
        limit: 20,
        ...(status ? { status } : {}),
        ...(q.trim() ? { q: q.trim() } : {}),
        ...(more ? { cursor: more } : {}),
      });
      setRuns(more ? [...(runs ?? []), ...r.runs] : r.runs);
      setCursor(r.nextCursor);
      setError('');
    } catch (err) {
      setError((err as Error).message);
    }
  };
  useEffect(() => void load(), [status]);

  return (
    <section class="card" aria-labelledby="runs-title">
      <h2 id="runs-title">Your runs</h2>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void load();
        }}
      >
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as RunStatus | '')}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Question contains
          <input type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {runs && runs.length === 0 && <p>No runs yet.</p>}
      <ul class="runs">
        {runs?.map((r) => (
          <li key={r.id}>
            <a href={`#/run/${encodeURIComponent(r.id)}`}>{r.question || r.id}</a>
            <span class={`badge ${r.status}`}>{r.status.replace('_', ' ')}</span>
            <span class="muted">{r.startedAt ? new Date(r.startedAt).toLocaleString() : ''}</span>
            {(r.status === 'running' || r.status === 'awaiting_review') && (
              <button
                type="button"
                class="link"
                onClick={async () => {
                  await client.research.cancel(r.id).catch((err: Error) => setError(err.message));
                  void load();
                }}
              >
                Cancel<span class="sr-only"> {r.question}</span>
              </button>
            )}
          </li>
        ))}
      </ul>
      {cursor && (
        <button type="button" onClick={() => void load(cursor)}>
          More
        </button>
      )}
    </section>
  );
}
