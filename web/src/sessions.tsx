// Sessions: the tenant's sessions at #/sessions (and a new one), one session at #/session/<id>: its
// runs in order with their reports, and a follow-up question that starts a run in it.
import { useEffect, useState } from 'preact/hooks';
import { client, plural } from './api';
import type { CollectionView, SessionList, SessionView } from '../../src/shared/knowledge';
import type { ResearchRequest } from '../../src/shared/schemas';

export function Sessions() {
  const [list, setList] = useState<SessionList['sessions'] | undefined>();
  const [title, setTitle] = useState('');
  const [error, setError] = useState('');
  useEffect(() => {
    client.sessions.list().then(
      (r) => setList(r.sessions),
      (err: Error) => setError(err.message),
    );
  }, []);
  return (
    <>
      <form
        class="card"
        aria-labelledby="new-session"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const s = await client.sessions.create(title);
            location.hash = `#/session/${encodeURIComponent(s.id)}`;
          } catch (err) {
            setError((err as Error).message);
          }
        }}
      >
        <h1 id="new-session">New session</h1>
        <p class="muted">Questions asked in a session see its earlier questions and reports.</p>
        <label for="session-title">Title</label>
        <input id="session-title" maxLength={300} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
        <button type="submit">Start a session</button>
      </form>
      <section class="card" aria-labelledby="sessions-title">
        <h2 id="sessions-title">Your sessions</h2>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {list?.length === 0 && <p>No sessions yet.</p>}
        <ul class="runs">
          {list?.map((s) => (
            <li key={s.id}>
              <a href={`#/session/${encodeURIComponent(s.id)}`}>{s.title || s.id}</a>
              <span class="muted">
                {plural(s.runCount, 'question')} · {new Date(s.createdAt).toLocaleString()}
              </span>
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

export function SessionPage({ id }: { id: string }) {
  const [s, setS] = useState<SessionView | undefined>();
  const [question, setQuestion] = useState('');
  const [autoAccept, setAutoAccept] = useState(true);
  const [collections, setCollections] = useState<CollectionView[]>([]);
  const [chosen, setChosen] = useState<string[]>([]);
  useEffect(() => {
    client.collections.list().then(
      (r) => setCollections(r.collections),
      () => setCollections([]),
    );
  }, []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  useEffect(() => {
    const load = () => client.sessions.get(id).then(setS, (err: Error) => setError(err.message));
    void load();
    const t = setInterval(() => void load(), 5_000);
    return () => clearInterval(t);
  }, [id]);
  return (
    <>
      <section class="card" aria-labelledby="session-title-h">
        <p>
          <a href="#/sessions">← All sessions</a>
        </p>
        <h1 id="session-title-h">{s?.title || id}</h1>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {s?.runs?.length === 0 && <p>No questions yet.</p>}
        <ol class="session-runs">
          {s?.runs?.map((r) => (
            <li key={r.id}>
              <a href={`#/run/${encodeURIComponent(r.id)}`}>{r.question}</a>
              {r.status && <span class={`badge ${r.status}`}>{r.status.replace('_', ' ')}</span>}
              {r.reportTitle && <span class="muted">Report: {r.reportTitle}</span>}
            </li>
          ))}
        </ol>
      </section>
      <form
        class="card"
        aria-labelledby="follow-up-title"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            const body: ResearchRequest = {
              question,
              sessionId: id,
              options: { autoAcceptPlan: autoAccept, ...(chosen.length ? { collections: chosen } : {}) },
            };
            const r = await client.research.start(body);
            location.hash = `#/run/${encodeURIComponent(r.id)}`;
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <h2 id="follow-up-title">{s?.runs?.length ? 'Ask a follow-up question' : 'Ask the first question'}</h2>
        <label for="follow-up">Question</label>
        <textarea id="follow-up" required rows={2} maxLength={4000} value={question} onInput={(e) => setQuestion(e.currentTarget.value)} />
        {collections.length > 0 && (
          <fieldset>
            <legend>Your collections to search (none chosen: the run picks by their descriptions)</legend>
            {collections.map((c) => (
              <label key={c.id} class="choice">
                <input
                  type="checkbox"
                  checked={chosen.includes(c.id)}
                  onChange={(e) => setChosen((all) => (e.currentTarget.checked ? [...all, c.id] : all.filter((x) => x !== c.id)))}
                />
                {c.name}
              </label>
            ))}
          </fieldset>
        )}
        <label class="choice">
          <input type="checkbox" checked={autoAccept} onChange={(e) => setAutoAccept(e.currentTarget.checked)} />
          Start researching without waiting for my review of the plan
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Starting…' : 'Ask in this session'}
        </button>
      </form>
    </>
  );
}
