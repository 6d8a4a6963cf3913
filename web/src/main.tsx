// The researcher's page: ask, watch, review, read, find. Hash routes: #/ (ask and the runs list),
// #/run/<id> (one run). Everything comes from the API with the key kept in this browser.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, keyStore } from './api';
import { AskForm } from './ask';
import { Runs } from './runs';
import { RunPage } from './run';

function useRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

/** Asks for an API key when the API wants one (401), and keeps it in this browser. */
function KeyGate({ children }: { children: preact.ComponentChildren }) {
  const [state, setState] = useState<'checking' | 'ok' | 'needed'>('checking');
  const [draft, setDraft] = useState('');
  const [error, setError] = useState('');
  const check = async () => {
    try {
      await call('GET', '/v1/research?limit=1');
      setState('ok');
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        setState('needed');
        if (keyStore.get()) setError(err.message);
      } else setState('ok');
    }
  };
  useEffect(() => void check(), []);
  if (state === 'checking') return <p role="status">Connecting…</p>;
  if (state === 'needed')
    return (
      <form
        class="card key-form"
        onSubmit={(e) => {
          e.preventDefault();
          keyStore.set(draft.trim());
          setError('');
          void check();
        }}
      >
        <h2>API key</h2>
        <p>This server needs a key. It is kept in this browser only.</p>
        <label for="api-key">Key</label>
        <input id="api-key" type="password" autocomplete="off" required value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit">Use this key</button>
      </form>
    );
  return <>{children}</>;
}

function App() {
  const route = useRoute();
  const run = /^#\/run\/(.+)$/.exec(route);
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">
          deep-research
        </a>
        {keyStore.get() && (
          <button
            class="link"
            type="button"
            onClick={() => {
              keyStore.clear();
              location.reload();
            }}
          >
            Forget key
          </button>
        )}
      </header>
      <main id="main">
        <KeyGate>
          {run ? (
            <RunPage key={run[1]} id={decodeURIComponent(run[1]!)} />
          ) : (
            <>
              <AskForm />
              <Runs />
            </>
          )}
        </KeyGate>
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
