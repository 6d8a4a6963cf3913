// One run: its live timeline (from the events stream), the plan under review with approve and
// revise, the clarifying question, what it waits for, and the report when it is written.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, client, costText, Draft, follow, keyStore, plural, type DraftPart, type PlanEditInput, type RunEvent } from './api';
import { DraftView, Report } from './report';
import type { ArtifactList } from '../../src/api/contract';
import type { CollectionView } from '../../src/shared/knowledge';
import type { AnswerClarification, ResearchView, SteerInput } from '../../src/shared/messages';
import type { Phase, RunStatus } from '../../src/shared/schemas';

/** Phases in which the run takes steering messages. */
const STEERABLE: readonly Phase[] = ['coordinating', 'planning', 'reviewing', 'queued', 'researching'];
const ENDED: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export function RunPage({ id }: { id: string }) {
  const [events, setEvents] = useState<RunEvent[]>([]);
  // The report (or answer) as the model writes it: its parts, drawn again as each piece arrives.
  const [draft, setDraft] = useState<DraftPart[]>([]);
  const [status, setStatus] = useState<ResearchView | undefined>();
  const [link, setLink] = useState<'live' | 'reconnecting'>('live');
  const [error, setError] = useState('');
  const refresh = useRef<() => void>(() => undefined);

  useEffect(() => {
    const abort = new AbortController();
    const notYours = (err: unknown) =>
      err instanceof ApiError && err.status === 404
        ? `No such run, or not yours: a run belongs to the tenant of the key that started it, and this page uses ${keyStore.get() ? 'a key of another tenant' : 'no key (tenant default)'}.`
        : String((err as Error).message ?? err);
    const load = () =>
      client.research
        .get(id)
        .then(setStatus)
        .catch((err: unknown) => setError(notYours(err)));
    refresh.current = () => void load();
    void load();
    // The status (plan, usage, what the run waits for) is read again on every event and every 5 s.
    const poll = setInterval(() => void load(), 5_000);
    const pieces = new Draft();
    follow(
      id,
      0,
      (e) => {
        // Draft pieces come a few a second: they change the draft only (the status is read as usual).
        if (e.type === 'draft') {
          if (pieces.apply(e.data) !== 'ignored') setDraft(pieces.list());
          return;
        }
        setEvents((all) => [...all, e]);
        void load();
      },
      setLink,
      abort.signal,
    ).catch((err: unknown) => setError(notYours(err)));
    return () => {
      abort.abort();
      clearInterval(poll);
    };
  }, [id]);

  const done = events.some((e) => e.type === 'done') || (status && ENDED.includes(status.status));
  return (
    <>
      <section class="card" aria-labelledby="run-title">
        <p>
          <a href="#/">← All runs</a>
        </p>
        <h1 id="run-title">{status?.question ?? id}</h1>
        {status && <RunHeader s={status} link={done ? undefined : link} />}
        {error && (
          <p class="error" role="alert">
            {error}
            {error.startsWith('No such run') && (
              <>
                {' '}
                <a href="#/keys">Use another key</a>
              </>
            )}
          </p>
        )}
        {status && !done && (status.status === 'running' || status.status === 'awaiting_review') && (
          <button
            type="button"
            class="secondary"
            onClick={() =>
              void client.research.cancel(id).then(
                () => refresh.current(),
                (err: Error) => setError(err.message),
              )
            }
          >
            Cancel this run
          </button>
        )}
      </section>
      {status?.phase === 'reviewing' && status.plan && <Review id={id} s={status} onDone={() => refresh.current()} />}
      {status && !done && status.status !== 'completed' && STEERABLE.includes(status.phase) && (
        <Steer id={id} s={status} onDone={() => refresh.current()} />
      )}
      {status?.clarificationQuestion && status.status === 'awaiting_review' && status.phase === 'coordinating' && (
        <Clarify id={id} question={status.clarificationQuestion} onDone={() => refresh.current()} />
      )}
      {draft.length > 0 && !done && status?.outcome !== 'report' && !status?.answer && <DraftView parts={draft} />}
      {status?.outcome === 'answered_directly' && status.answer && (
        <section class="card" aria-label="Answer">
          <h2>Answer</h2>
          <p>{status.answer}</p>
        </section>
      )}
      {status?.outcome === 'report' && <Report id={id} />}
      <Timeline id={id} events={events} />
    </>
  );
}

function RunHeader({ s, link }: { s: ResearchView; link: 'live' | 'reconnecting' | undefined }) {
  const tokens = s.usage ? s.usage.promptTokens + s.usage.completionTokens : 0;
  return (
    <>
      <p class="meta" role="status" aria-live="polite">
        <span class={`badge ${s.status}`}>{s.status.replace('_', ' ')}</span> phase <strong>{s.phase}</strong> · {tokens.toLocaleString()}{' '}
        tokens · {costText(s.usage ?? { costUsd: 0 })}
        {link === 'reconnecting' && <span class="muted"> · reconnecting…</span>}
      </p>
      {s.status === 'awaiting_review' && s.phase === 'reviewing' && <p class="notice">The plan waits for your review below.</p>}
      {s.queue && (
        <p class="notice" role="status">
          Queued: place {s.queue.position} of {s.queue.waiting} in your queue; {s.queue.running} of your runs research now (at most{' '}
          {s.queue.maxRuns} at once).
        </p>
      )}
      {(s.waiting ?? []).map((w, i) => (
        <p key={i} class="notice" role="status">
          Waiting{w.step ? ` (step ${w.step})` : ''}: {w.activity} is being retried, attempt {w.attempt}
          {w.lastError ? `: ${w.lastError}` : ''}. The run goes on by itself once it gets through.
        </p>
      ))}
      {s.error && (
        <p class="error" role="alert">
          {s.error}
        </p>
      )}
    </>
  );
}

/** A step as the reviewer edits it: the plan's fields, and whether it is to go. */
interface EditedStep {
  id: string;
  title: string;
  description: string;
  type: 'research' | 'processing';
  after: string;
  removed: boolean;
  added: boolean;
}

const editable = (st: NonNullable<ResearchView['plan']>['steps'][number]): EditedStep => ({
  id: st.id,
  title: st.title,
  description: st.description ?? '',
  type: st.type,
  after: st.dependsOn.join(', '),
  removed: false,
  added: false,
});
const ids = (after: string) => [...new Set(after.split(/[\s,]+/).filter(Boolean))];

/** The edits that make the plan into the reviewer's steps, as revisePlan takes them. */
function editsOf(plan: NonNullable<ResearchView['plan']>, steps: EditedStep[]): PlanEditInput[] {
  const edits: PlanEditInput[] = [];
  for (const st of steps) {
    if (st.added) {
      if (!st.removed)
        edits.push({
          kind: 'add',
          step: { id: st.id, title: st.title, description: st.description, type: st.type, dependsOn: ids(st.after) },
        });
      continue;
    }
    const was = plan.steps.find((x) => x.id === st.id)!;
    if (st.removed) {
      edits.push({ kind: 'remove', stepId: st.id });
      continue;
    }
    if (st.title !== was.title) edits.push({ kind: 'setTitle', stepId: st.id, title: st.title });
    if (st.description !== (was.description ?? '')) edits.push({ kind: 'setDescription', stepId: st.id, description: st.description });
    if (st.type !== was.type) edits.push({ kind: 'setType', stepId: st.id, type: st.type });
    if (ids(st.after).join() !== was.dependsOn.join()) edits.push({ kind: 'setDependencies', stepId: st.id, dependsOn: ids(st.after) });
  }
  return edits;
}

function Review({ id, s, onDone }: { id: string; s: ResearchView; onDone: () => void }) {
  const [feedback, setFeedback] = useState('');
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const plan = s.plan!;
  // The reviewer's copy of the steps, while editing; a new plan version starts from its own.
  const [steps, setSteps] = useState<EditedStep[] | undefined>();
  useEffect(() => setSteps(undefined), [plan.version]);
  const edits = steps ? editsOf(plan, steps) : [];
  const change = (i: number, part: Partial<EditedStep>) => setSteps((all) => all!.map((st, j) => (j === i ? { ...st, ...part } : st)));
  const addStep = () =>
    setSteps((all) => {
      const taken = new Set(all!.map((st) => st.id));
      let n = all!.length + 1;
      while (taken.has(`step-${n}`)) n++;
      return [...all!, { id: `step-${n}`, title: '', description: '', type: 'research', after: '', removed: false, added: true }];
    });
  const send = async (kind: 'approve' | 'revise') => {
    setBusy(true);
    try {
      await (kind === 'approve' ? client.research.approve(id, plan.version) : client.research.revise(id, plan.version, feedback, edits));
      setMessage(kind === 'approve' ? `Plan v${plan.version} approved.` : `Plan v${plan.version} sent back; a new version is being made.`);
      setFeedback('');
      onDone();
    } catch (err) {
      // Someone else decided first, the plan moved on, or the edits would not make a plan: say so.
      setMessage(
        err instanceof ApiError && (err.status === 409 || err.status === 400) ? `Not sent: ${err.message}.` : (err as Error).message,
      );
      onDone();
    } finally {
      setBusy(false);
    }
  };
  const revisionsLeft = plan.revisionsLeft ?? 0;
  return (
    <section class="card review" aria-labelledby="review-title">
      <h2 id="review-title">
        Plan v{plan.version}: {plan.title}
      </h2>
      {plan.thought && (
        <p class="plan-thought">
          <strong>Why these steps:</strong> {plan.thought}
        </p>
      )}
      {steps ? (
        <ol class="plan-steps editing">
          {steps.map((st, i) => (
            <li key={st.id} class={st.removed ? 'removed' : ''}>
              <label>
                Title of step {st.id}
                <input value={st.title} disabled={st.removed} onInput={(e) => change(i, { title: e.currentTarget.value })} />
              </label>
              <label>
                What step {st.id} does
                <textarea
                  rows={2}
                  value={st.description}
                  disabled={st.removed}
                  onInput={(e) => change(i, { description: e.currentTarget.value })}
                />
              </label>
              <div class="row">
                <label>
                  Kind of step {st.id}{' '}
                  <select
                    value={st.type}
                    disabled={st.removed}
                    onChange={(e) => change(i, { type: e.currentTarget.value as EditedStep['type'] })}
                  >
                    <option value="research">researches the web</option>
                    <option value="processing">computes with code</option>
                  </select>
                </label>
                <label>
                  Step {st.id} comes after{' '}
                  <input
                    value={st.after}
                    size={10}
                    placeholder="ids"
                    disabled={st.removed}
                    onInput={(e) => change(i, { after: e.currentTarget.value })}
                  />
                </label>
                <label>
                  <input type="checkbox" checked={st.removed} onChange={(e) => change(i, { removed: e.currentTarget.checked })} /> Remove
                  step {st.id}
                </label>
              </div>
            </li>
          ))}
        </ol>
      ) : (
        <ol class="plan-steps">
          {plan.steps.map((st) => (
            <li key={st.id}>
              <strong>{st.title}</strong>{' '}
              <span class="muted">
                ({st.type === 'processing' ? 'computes with code' : 'researches the web'}
                {st.dependsOn.length ? `, after ${st.dependsOn.join(', ')}` : ''})
              </span>
              {st.description && <p class="step-description">{st.description}</p>}
            </li>
          ))}
        </ol>
      )}
      <div class="row">
        {steps ? (
          <>
            <button type="button" class="secondary" onClick={addStep}>
              Add a step
            </button>
            <button type="button" class="link" onClick={() => setSteps(undefined)}>
              Discard the edits
            </button>
          </>
        ) : (
          <button type="button" class="secondary" disabled={revisionsLeft <= 0} onClick={() => setSteps(plan.steps.map(editable))}>
            Edit the steps
          </button>
        )}
      </div>
      {plan.brief && <Brief brief={plan.brief} />}
      <div class="row">
        <button type="button" disabled={busy || edits.length > 0} onClick={() => void send('approve')}>
          Approve and start
        </button>
      </div>
      <label for="feedback">What should change? ({revisionsLeft} revisions left)</label>
      <textarea id="feedback" rows={2} value={feedback} onInput={(e) => setFeedback(e.currentTarget.value)} />
      <button
        type="button"
        class="secondary"
        disabled={busy || (!feedback.trim() && !edits.length) || revisionsLeft <= 0}
        onClick={() => void send('revise')}
      >
        {edits.length ? `Revise the plan (${edits.length} edit${edits.length === 1 ? '' : 's'})` : 'Revise the plan'}
      </button>
      {message && <p role="status">{message}</p>}
    </section>
  );
}

/** The background brief the plan rests on, with the sources it cites (opened on request). */
function Brief({ brief }: { brief: NonNullable<NonNullable<ResearchView['plan']>['brief']> }) {
  return (
    <details class="plan-brief">
      <summary>
        What the plan rests on: the background brief, {brief.sources.length} source{brief.sources.length === 1 ? '' : 's'}
      </summary>
      <p class="brief-text">{brief.text}</p>
      <ol class="brief-sources">
        {brief.sources.map((src) => (
          <li key={src.n} value={src.n}>
            {/^https?:/.test(src.url) ? (
              <a href={src.url} target="_blank" rel="noopener noreferrer">
                {src.title || src.url}
              </a>
            ) : (
              <span>{src.title || src.url}</span>
            )}
          </li>
        ))}
      </ol>
    </details>
  );
}

/** Steering while the run goes on: guidance, banned domains, pages to read, step changes, wrap up. */
function Steer({ id, s, onDone }: { id: string; s: ResearchView; onDone: () => void }) {
  const [guidance, setGuidance] = useState('');
  const [domains, setDomains] = useState('');
  const [urls, setUrls] = useState('');
  const [stepId, setStepId] = useState('');
  const [description, setDescription] = useState('');
  const [title, setTitle] = useState('');
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const [collections, setCollections] = useState<CollectionView[]>([]);
  const [chosen, setChosen] = useState<string[]>([]);
  useEffect(() => {
    // The tenant's collections, to add to the run's knowledge base (none: the choice is not shown).
    client.collections.list().then(
      (r) => setCollections(r.collections),
      () => setCollections([]),
    );
  }, []);
  const researching = s.phase === 'researching' && !s.steering?.wrappingUp;
  const pending = (s.plan?.steps ?? []).filter((st) => st.status === 'pending');
  const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);
  const send = async (body: SteerInput, done: string, clear: () => void) => {
    setBusy(true);
    try {
      await client.research.steer(id, body);
      setMessage(done);
      clear();
    } catch (err) {
      setMessage(err instanceof ApiError && err.status === 409 ? `Not taken: ${err.message}.` : (err as Error).message);
    } finally {
      setBusy(false);
      onDone();
    }
  };
  return (
    <section class="card steer" aria-labelledby="steer-title">
      <h2 id="steer-title">Steer this run</h2>
      {(s.steering?.guidance.length ?? 0) > 0 && <p class="muted">Guidance so far: {s.steering!.guidance.join(' · ')}</p>}
      {(s.steering?.bannedDomains.length ?? 0) > 0 && <p class="muted">Left out: {s.steering!.bannedDomains.join(', ')}</p>}
      <label for="guidance">Guidance for every later step</label>
      <textarea id="guidance" rows={2} value={guidance} onInput={(e) => setGuidance(e.currentTarget.value)} />
      <button
        type="button"
        disabled={busy || !guidance.trim()}
        onClick={() => void send({ kind: 'guidance', text: guidance.trim() }, 'Guidance sent.', () => setGuidance(''))}
      >
        Send guidance
      </button>
      <label for="ban">Leave out these domains</label>
      <input id="ban" placeholder="example.com" value={domains} onInput={(e) => setDomains(e.currentTarget.value)} />
      <button
        type="button"
        class="secondary"
        disabled={busy || !words(domains).length}
        onClick={() => void send({ kind: 'banDomains', domains: words(domains) }, 'Domains left out.', () => setDomains(''))}
      >
        Ban domains
      </button>
      {researching && (
        <>
          <label for="must-read">Pages to read (addresses)</label>
          <input id="must-read" placeholder="https://…" value={urls} onInput={(e) => setUrls(e.currentTarget.value)} />
          <button
            type="button"
            class="secondary"
            disabled={busy || !words(urls).length}
            onClick={() => void send({ kind: 'mustRead', urls: words(urls) }, 'A step will read them.', () => setUrls(''))}
          >
            Read these pages
          </button>
          {collections.length > 0 && (
            <fieldset>
              <legend>Your collections to search from now on</legend>
              {collections.map((c) => (
                <label key={c.id} class="check">
                  <input
                    type="checkbox"
                    checked={chosen.includes(c.id)}
                    onChange={(e) => setChosen((all) => (e.currentTarget.checked ? [...all, c.id] : all.filter((x) => x !== c.id)))}
                  />{' '}
                  {c.name}
                </label>
              ))}
              <button
                type="button"
                class="secondary"
                disabled={busy || !chosen.length}
                onClick={() =>
                  void send({ kind: 'mustRead', collections: chosen }, 'The run searches them from now on.', () => setChosen([]))
                }
              >
                Search these collections
              </button>
            </fieldset>
          )}
          <label for="step-id">A step not started yet, or a new one</label>
          <input id="step-id" list="pending-steps" value={stepId} onInput={(e) => setStepId(e.currentTarget.value.trim())} />
          <datalist id="pending-steps">
            {pending.map((st) => (
              <option key={st.id} value={st.id}>
                {st.title}
              </option>
            ))}
          </datalist>
          <label for="step-title">Title (new step)</label>
          <input id="step-title" value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
          <label for="step-description">What the step should find</label>
          <textarea id="step-description" rows={2} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          <div class="row">
            <button
              type="button"
              class="secondary"
              disabled={busy || !stepId || !description.trim() || !pending.some((st) => st.id === stepId)}
              onClick={() =>
                void send({ kind: 'editStep', stepId, description: description.trim() }, `Step ${stepId} changed.`, () =>
                  setDescription(''),
                )
              }
            >
              Change step
            </button>
            <button
              type="button"
              class="secondary"
              disabled={busy || !stepId || !title.trim() || !description.trim() || s.plan?.steps.some((st) => st.id === stepId)}
              onClick={() =>
                void send(
                  { kind: 'addStep', step: { id: stepId, title: title.trim(), description: description.trim() } },
                  `Step ${stepId} added.`,
                  () => (setTitle(''), setDescription('')),
                )
              }
            >
              Add step
            </button>
            <button
              type="button"
              class="secondary"
              disabled={busy || !pending.some((st) => st.id === stepId)}
              onClick={() => void send({ kind: 'dropStep', stepId }, `Step ${stepId} dropped.`, () => setStepId(''))}
            >
              Drop step
            </button>
          </div>
          <button
            type="button"
            disabled={busy}
            onClick={() => void send({ kind: 'wrapUp' }, 'Wrapping up: the report is written from what was found.', () => undefined)}
          >
            Wrap up now
          </button>
        </>
      )}
      {message && <p role="status">{message}</p>}
    </section>
  );
}

function Clarify({ id, question, onDone }: { id: string; question: string; onDone: () => void }) {
  const [answer, setAnswer] = useState('');
  const [message, setMessage] = useState('');
  return (
    <form
      class="card"
      aria-labelledby="clarify-title"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          const body: AnswerClarification = { answer };
          await client.research.answer(id, body.answer);
          setMessage('Answer sent.');
        } catch (err) {
          setMessage((err as Error).message);
        }
        onDone();
      }}
    >
      <h2 id="clarify-title">The run asks</h2>
      <p>{question}</p>
      <label for="answer">Your answer</label>
      <input id="answer" required value={answer} onInput={(e) => setAnswer(e.currentTarget.value)} />
      <button type="submit">Answer</button>
      {message && <p role="status">{message}</p>}
    </form>
  );
}

/** One line per event, as a person reads it. */
function describe(e: RunEvent): string {
  switch (e.type) {
    case 'started':
      return 'Run started';
    case 'phase':
      return `Phase: ${e.data.phase}`;
    case 'status':
      return e.data.status === 'awaiting_review'
        ? e.data.phase === 'coordinating'
          ? 'A clarifying question is asked'
          : 'The plan waits for review'
        : `Status: ${e.data.status}`;
    case 'plan':
      return `Plan v${e.data.version}: ${e.data.title} (${e.data.steps.length} steps)`;
    case 'step': {
      const d = e.data;
      return `Step ${d.id} ${d.status}${d.attempts > 1 ? ` (attempt ${d.attempts})` : ''}${d.summary ? `: ${d.summary}` : ''}`;
    }
    case 'search':
      return `Step ${e.data.step} searched ${e.data.queries.map((q) => `“${q.query}” (${q.error ? 'failed' : q.results})`).join(', ')}`;
    case 'crawl':
      return `Step ${e.data.step} ${e.data.pages.map((p) => `${p.status === 'ok' ? 'read' : p.status} ${p.url}${p.reason ? ` (${p.reason})` : ''}`).join('; ')}`;
    case 'verdict': {
      const d = e.data;
      return `Check of step ${d.step} (attempt ${d.attempt}): ${d.passed ? 'passed' : `sent back${d.feedback ? `: ${d.feedback}` : ''}`}`;
    }
    case 'usage':
      return `${(e.data.promptTokens + e.data.completionTokens).toLocaleString()} tokens · ${costText(e.data)}`;
    case 'think':
      return e.data.wave !== undefined
        ? `Supervisor thinks, after wave ${e.data.wave}: ${e.data.thought}`
        : `Step ${e.data.step} thinks: ${e.data.thought}`;
    case 'tool':
      return 'tool' in e.data
        ? `Step ${e.data.step} ran Python: ${e.data.status}, ${plural(e.data.artifacts, 'file')} kept`
        : `Step ${e.data.step} used a tool (${e.data.chars.toLocaleString()} characters back)`;
    case 'steer':
      return `Steered: ${e.data.summary}`;
    case 'moved':
      return e.data.note;
    case 'report':
      return `Report written: ${e.data.title}`;
    case 'done':
      return `Run ${e.data.status}${e.data.error ? `: ${e.data.error}` : ''}`;
    default:
      // An event type newer than this page.
      return (e as { type: string }).type;
  }
}

function Timeline({ id, events }: { id: string; events: RunEvent[] }) {
  // The run's files, read again whenever a python run kept some: its charts are shown in place.
  const kept = events.filter((e) => e.type === 'tool' && 'tool' in e.data && e.data.artifacts > 0).length;
  const [artifacts, setArtifacts] = useState<ArtifactList['artifacts']>([]);
  useEffect(() => {
    if (kept)
      client.research.artifacts(id).then(
        (r) => setArtifacts(r.artifacts),
        () => undefined,
      );
  }, [id, kept]);
  return (
    <section class="card" aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      <ol class="timeline" aria-live="polite">
        {events.map((e) => (
          <li key={e.id} data-event-id={e.id} class={`ev ${e.type}${e.type === 'tool' && 'tool' in e.data ? ' python' : ''}`}>
            <time dateTime={e.data.at}>{e.data.at ? new Date(e.data.at).toLocaleTimeString() : ''}</time> {describe(e)}
            {e.type === 'tool' && 'tool' in e.data && e.data.artifacts > 0 && (
              <PythonFiles files={artifacts.filter((a) => a.stepId === e.data.step)} />
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** A python run's kept files: images shown (fetched with the key), the others named. */
function PythonFiles({ files }: { files: ArtifactList['artifacts'] }) {
  const [urls, setUrls] = useState<Record<string, string>>({});
  useEffect(() => {
    const made: string[] = [];
    for (const f of files)
      if (f.contentType.startsWith('image/') && !urls[f.artifactId])
        void client.download(f.url).then((b) => {
          const u = URL.createObjectURL(b);
          made.push(u);
          setUrls((all) => ({ ...all, [f.artifactId]: u }));
        });
    return () => made.forEach((u) => URL.revokeObjectURL(u));
  }, [files.map((f) => f.artifactId).join()]);
  return (
    <ul class="files">
      {files.map((f) =>
        f.contentType.startsWith('image/') ? (
          <li key={f.artifactId}>{urls[f.artifactId] && <img src={urls[f.artifactId]} alt={`Chart from Python: ${f.name}`} />}</li>
        ) : (
          <li key={f.artifactId}>
            {f.name} <span class="muted">({f.size.toLocaleString()} bytes)</span>
          </li>
        ),
      )}
    </ul>
  );
}
