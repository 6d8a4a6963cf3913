// The researcher's page: ask, watch, review, read, find; knowledge base, sessions, schedules, keys.
// Hash routes: #/ (ask and the runs list), #/run/<id> (one run), #/kb and #/kb/<id> (collections),
// #/sessions and #/session/<id>, #/schedules, #/memory, #/keys. Everything comes from the API with the key
// kept in this browser.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, client, keyStore } from './api';
import { DEFAULT_KEY_COMMAND, KeyForm } from './key-form';
import { AskForm } from './ask';
import { Runs } from './runs';
import { RunPage } from './run';
import { CollectionPage, Collections } from './kb';
import { SessionPage, Sessions } from './sessions';
import { Schedules } from './schedules';
import { Keys } from './keys';
import { Memory } from './memory';

const SCREENS = [
  ['#/', 'Research'],
  ['#/kb', 'Knowledge base'],
  ['#/sessions', 'Sessions'],
  ['#/schedules', 'Schedules'],
  ['#/memory', 'Memory'],
  ['#/keys', 'Keys'],
] as const;

/** The screen a hash shows, and which entry of the navigation it belongs to. */
function screenOf(route: string): { section: string; view: preact.ComponentChildren } {
  const one = (re: RegExp) => {
    const m = re.exec(route);
    return m ? decodeURIComponent(m[1]!) : undefined;
  };
  const run = one(/^#\/run\/(.+)$/);
  if (run) return { section: '#/', view: <RunPage key={run} id={run} /> };
  const collection = one(/^#\/kb\/(.+)$/);
  if (collection) return { section: '#/kb', view: <CollectionPage key={collection} id={collection} /> };
  const session = one(/^#\/session\/(.+)$/);
  if (session) return { section: '#/sessions', view: <SessionPage key={session} id={session} /> };
  if (route === '#/kb') return { section: '#/kb', view: <Collections /> };
  if (route === '#/sessions') return { section: '#/sessions', view: <Sessions /> };
  if (route === '#/schedules') return { section: '#/schedules', view: <Schedules /> };
  if (route === '#/keys') return { section: '#/keys', view: <Keys /> };
  if (route === '#/memory') return { section: '#/memory', view: <Memory /> };
  return {
    section: '#/',
    view: (
      <>
        <AskForm />
        <Runs />
      </>
    ),
  };
}

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
  const [error, setError] = useState('');
  const check = async () => {
    try {
      await client.research.list({ limit: 1 });
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
      <section class="card">
        <h2>API key</h2>
        <p>
          This server needs a key; it is kept in this browser only. On the server's machine, <code>{DEFAULT_KEY_COMMAND}</code> makes one
          for the runs started without a key (tenant default); another tenant's key shows that tenant's runs.
        </p>
        <KeyForm
          error={error}
          onKey={() => {
            setError('');
            void check();
          }}
        />
      </section>
    );
  return <>{children}</>;
}

function App() {
  const route = useRoute();
  const { section, view } = screenOf(route);
  // A new screen takes the focus to its first heading, so keyboard and screen reader users land there.
  useEffect(() => {
    const h = document.querySelector<HTMLElement>('main h1');
    if (h && route) {
      h.tabIndex = -1;
      h.focus({ preventScroll: true });
    }
  }, [route]);
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">
          deep-research
        </a>
        <nav aria-label="Screens">
          <ul>
            {SCREENS.map(([href, label]) => (
              <li key={href}>
                <a href={href} {...(section === href ? { 'aria-current': 'page' } : {})}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
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
        <KeyGate>{view}</KeyGate>
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
