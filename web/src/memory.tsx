// Memory at #/memory: what the service remembers about you (the user of this page's key), each
// fact with the words it was learned from; correct one, delete one, or forget everything.
import { useEffect, useState } from 'preact/hooks';
import { client, plural } from './api';
import type { MemoryFact, MemoryView } from '../../src/api/contract';
import type { FactCategory } from '../../src/shared/memory';

const CATEGORIES = ['field', 'expertise', 'language', 'sources', 'dislike', 'other'] as const;

function FactEditor({ fact, done }: { fact: MemoryFact; done: (message: string) => void }) {
  const [text, setText] = useState(fact.text);
  const [category, setCategory] = useState<FactCategory>(fact.category);
  const [error, setError] = useState('');
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      await client.memory.edit(fact.id, { text: text.trim(), category });
      done('Fact corrected.');
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="fact-edit" onSubmit={(e) => void save(e)}>
      <label for={`text-${fact.id}`}>Fact</label>
      <input id={`text-${fact.id}`} required maxLength={200} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <label for={`category-${fact.id}`}>Category</label>
      <select id={`category-${fact.id}`} value={category} onChange={(e) => setCategory(e.currentTarget.value as FactCategory)}>
        {CATEGORIES.map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit">Save</button>
      <button type="button" class="link" onClick={() => done('')}>
        Cancel
      </button>
    </form>
  );
}

export function Memory() {
  const [memory, setMemory] = useState<MemoryView | undefined>();
  const [editing, setEditing] = useState<string | undefined>();
  const [message, setMessage] = useState('');
  const load = () => client.memory.list().then(setMemory, (err: Error) => setMessage(err.message));
  useEffect(() => void load(), []);
  const act = async (work: () => Promise<string>) => {
    try {
      setMessage(await work());
    } catch (err) {
      setMessage((err as Error).message);
    }
    void load();
  };
  const remove = (f: MemoryFact) =>
    confirm(`Delete “${f.text}”? It will not be learned again from what you said before.`) &&
    void act(async () => {
      await client.memory.delete(f.id);
      return 'Fact deleted.';
    });
  const forgetAll = () =>
    confirm('Delete everything remembered about you?') &&
    void act(async () => `${plural((await client.memory.forgetAll()).deleted, 'fact')} deleted.`);
  return (
    <section class="card" aria-labelledby="memory-title">
      <h1 id="memory-title">Memory</h1>
      <p class="muted">
        What runs learned about you from your questions, plan feedback, answers and steering: the planner, the coordinator and the reporter
        read it. To leave it out of one run, clear “Use and add to what runs remember about me” under “Review, budget and language” when you
        ask (<code>deep-research run --option memory=false</code> on the command line).
        {memory && !memory.enabled && ' This key was made with memory off: its runs neither use nor teach it.'}
      </p>
      {message && <p role="status">{message}</p>}
      {memory?.facts.length === 0 && <p>Nothing is remembered about {memory.userId}.</p>}
      {memory && memory.facts.length > 0 && (
        <>
          <ul class="facts">
            {memory.facts.map((f) => (
              <li key={f.id}>
                {editing === f.id ? (
                  <FactEditor
                    fact={f}
                    done={(m) => {
                      setEditing(undefined);
                      if (m) void act(async () => m);
                    }}
                  />
                ) : (
                  <p>
                    <span class="badge">{f.category}</span> {f.text}{' '}
                    <button type="button" class="link" onClick={() => setEditing(f.id)}>
                      Edit<span class="sr-only"> “{f.text}”</span>
                    </button>{' '}
                    <button type="button" class="link" onClick={() => remove(f)}>
                      Delete<span class="sr-only"> “{f.text}”</span>
                    </button>
                  </p>
                )}
                <ul class="evidence" aria-label={`Where “${f.text}” comes from`}>
                  {f.evidence.map((e) => (
                    <li key={`${e.researchId}-${e.quote}`}>
                      “{e.quote}” — your {e.kind} in <a href={`#/run/${encodeURIComponent(e.researchId)}`}>a run</a>,{' '}
                      {new Date(e.at).toLocaleString()}
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
          <button type="button" onClick={forgetAll}>
            Forget everything
          </button>
        </>
      )}
    </section>
  );
}
