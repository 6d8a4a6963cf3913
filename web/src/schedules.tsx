// Schedules at #/schedules: create (question, every or cron, note, when its webhook hears of a
// report), and per schedule pause or resume, run now, delete, its recent runs with a badge on each
// whose report found a change, and what changed in each report since the one before.
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useEffect, useRef, useState } from 'preact/hooks';
import { client, plural } from './api';
import type { ScheduleRequest } from '../../src/client';
import type { ReportJson, ScheduleList, ScheduleView } from '../../src/api/contract';
import type { NotifyWhen } from '../../src/shared/changes';

export function Schedules() {
  const [list, setList] = useState<ScheduleList['schedules'] | undefined>();
  const [question, setQuestion] = useState('');
  const [kind, setKind] = useState<'every' | 'cron'>('every');
  const [when, setWhen] = useState('1d');
  const [note, setNote] = useState('');
  const [notify, setNotify] = useState<NotifyWhen>('always');
  const [webhook, setWebhook] = useState('');
  // A cron's hours are this browser's time zone's unless changed (the API's default is UTC).
  const [timezone, setTimezone] = useState(() => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
  const [error, setError] = useState('');
  const load = () =>
    client.schedules.list().then(
      (r) => setList(r.schedules),
      (err: Error) => setError(err.message),
    );
  useEffect(() => void load(), []);
  return (
    <>
      <form
        class="card"
        aria-labelledby="new-schedule"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const body = {
              question,
              ...(kind === 'every' ? { every: when } : { cron: when, timezone: timezone.trim() || 'UTC' }),
              ...(note ? { note } : {}),
              ...(notify !== 'always' ? { notify } : {}),
              ...(webhook.trim() ? { options: { webhook: { url: webhook.trim() } } } : {}),
            } as ScheduleRequest;
            await client.schedules.create(body);
            setQuestion('');
            setNote('');
            setWebhook('');
            setError('');
            void load();
          } catch (err) {
            setError((err as Error).message);
          }
        }}
      >
        <h1 id="new-schedule">Research that repeats</h1>
        <label for="schedule-question">Question</label>
        <textarea
          id="schedule-question"
          required
          rows={2}
          maxLength={4000}
          value={question}
          onInput={(e) => setQuestion(e.currentTarget.value)}
        />
        <fieldset>
          <legend>How often</legend>
          <label class="choice">
            <input type="radio" name="schedule-kind" checked={kind === 'every'} onChange={() => (setKind('every'), setWhen('1d'))} />
            every (e.g. 12h, 1d)
          </label>
          <label class="choice">
            <input type="radio" name="schedule-kind" checked={kind === 'cron'} onChange={() => (setKind('cron'), setWhen('0 8 * * 1'))} />
            cron (minute hour day month weekday)
          </label>
          <label for="schedule-when">{kind === 'every' ? 'Interval' : 'Cron expression'}</label>
          <input id="schedule-when" required value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
          {kind === 'cron' && (
            <>
              <label for="schedule-timezone">Time zone of the cron's hours</label>
              <input id="schedule-timezone" value={timezone} onInput={(e) => setTimezone(e.currentTarget.value)} />
            </>
          )}
          <p class="muted" id="schedule-rules">
            {kind === 'every'
              ? 'An interval counts from midnight UTC: 1d runs at 00:00 UTC each day, 12h at 00:00 and 12:00 UTC. The first run comes at the next such time, not when the schedule is made (“Run now” starts one at once).'
              : 'The cron runs at its times in the time zone above (an IANA name such as Europe/Berlin; UTC when empty). The first run comes at the next matching time, not when the schedule is made (“Run now” starts one at once).'}{' '}
            Each schedule shows its next run below.
          </p>
        </fieldset>
        <label for="schedule-note">Note</label>
        <input id="schedule-note" maxLength={500} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
        <label for="schedule-notify">Alert</label>
        <select id="schedule-notify" value={notify} onChange={(e) => setNotify(e.currentTarget.value as NotifyWhen)}>
          <option value="always">on every report</option>
          <option value="on_change">only when something changed</option>
        </select>
        <label for="schedule-webhook">Webhook URL (optional)</label>
        <input
          id="schedule-webhook"
          type="url"
          placeholder="https://example.com/hooks/research"
          value={webhook}
          onInput={(e) => setWebhook(e.currentTarget.value)}
        />
        <button type="submit">Create schedule</button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <section class="card" aria-labelledby="schedules-title">
        <h2 id="schedules-title">Your schedules</h2>
        {list?.length === 0 && <p>No schedules yet.</p>}
        {list?.map((s) => (
          <Schedule key={s.id} id={s.id} onGone={() => void load()} />
        ))}
      </section>
    </>
  );
}

/** When a schedule's run started (ISO 8601 sorts as text). */
const when = (r: ScheduleView['recentRuns'][number]) => r.startedAt ?? r.scheduledAt ?? '';

function Schedule({ id, onGone }: { id: string; onGone: () => void }) {
  const [s, setS] = useState<ScheduleView | undefined>();
  const [message, setMessage] = useState('');
  const load = () => client.schedules.get(id).then(setS, (err: Error) => setMessage(err.message));
  useEffect(() => {
    void load();
    const t = setInterval(() => void load(), 5_000);
    return () => clearInterval(t);
  }, [id]);
  const act = async (what: 'trigger' | 'pause' | 'resume' | 'delete', done: string) => {
    try {
      if (what === 'delete') {
        await client.schedules.delete(id);
        return onGone();
      }
      setS(await client.schedules[what](id));
      setMessage(done);
    } catch (err) {
      setMessage((err as Error).message);
    }
  };
  if (!s) return <p role="status">Loading…</p>;
  return (
    <article class="schedule" aria-labelledby={`${id}-q`}>
      <h3 id={`${id}-q`}>{s.question}</h3>
      <p class="muted">
        {s.every ? `every ${s.every}` : `cron ${s.cron}${s.timezone ? ` (${s.timezone})` : ''}`} · {s.paused ? 'paused' : 'active'}
        {s.nextRunsAt[0] && !s.paused ? ` · next ${new Date(s.nextRunsAt[0]).toLocaleString()}` : ''} · {plural(s.runsStarted, 'run')}{' '}
        started
        {s.runsSkipped ? `, ${s.runsSkipped} skipped` : ''}
        {s.note ? ` · ${s.note}` : ''}
        {s.notify === 'on_change' ? ' · alerts only on a change' : ''}
      </p>
      <div class="row">
        <button type="button" class="secondary" onClick={() => void act('trigger', 'A run was started.')}>
          Run now
        </button>
        {s.paused ? (
          <button type="button" class="secondary" onClick={() => void act('resume', 'Resumed.')}>
            Resume
          </button>
        ) : (
          <button type="button" class="secondary" onClick={() => void act('pause', 'Paused.')}>
            Pause
          </button>
        )}
        <button type="button" class="secondary" onClick={() => confirm('Delete this schedule?') && void act('delete', 'Deleted.')}>
          Delete
        </button>
      </div>
      {message && <p role="status">{message}</p>}
      {s.recentRuns.length > 0 && (
        <ul class="runs" aria-label="Recent runs">
          {[...s.recentRuns]
            .sort((a, b) => when(b).localeCompare(when(a)))
            .map((r) => (
              <li key={r.id}>
                <a href={`#/run/${encodeURIComponent(r.id)}`}>{new Date(when(r)).toLocaleString()}</a>
                {s.running.includes(r.id) ? (
                  <span class="badge">running</span>
                ) : (
                  <>
                    <ChangeBadge changes={r.changes} />
                    <Changes runId={r.id} />
                  </>
                )}
              </li>
            ))}
        </ul>
      )}
    </article>
  );
}

/** A badge on a run whose report found a new source or a changed claim or figure, saying which
 *  in a few words; nothing on a run that found none (or that has no comparison). */
export function ChangeBadge({ changes: c }: { changes: ScheduleView['recentRuns'][number]['changes'] }) {
  if (!c || c.newSourceCount + c.changedClaimCount === 0) return null;
  const counts = [
    c.newSourceCount ? `${c.newSourceCount} new source${c.newSourceCount > 1 ? 's' : ''}` : '',
    c.changedClaimCount ? `${c.changedClaimCount} changed claim${c.changedClaimCount > 1 ? 's' : ''}` : '',
  ].filter(Boolean);
  const named = [...c.changedClaims.map((x) => x.about), ...c.newSources.map((x) => x.title)].slice(0, 2);
  return (
    <span class="change-note">
      <span class="badge changed">changed</span>
      {counts.join(', ')}
      {named.length ? `: ${named.join('; ')}` : ''}
    </span>
  );
}

/** The report's "What changed since …" section (the changes activity puts it first in the body). */
function changesOf(doc: ReportJson['doc']): string | undefined {
  const section = doc.sections.find((s) => /^What changed since/i.test(s.heading));
  return section ? `${section.heading}\n\n${section.markdown}`.trim() : undefined;
}

function Changes({ runId }: { runId: string }) {
  const [text, setText] = useState<string | null | undefined>();
  return (
    <details
      onToggle={(e) => {
        if (!(e.currentTarget as HTMLDetailsElement).open || text !== undefined) return;
        client.research.reportJson(runId).then(
          (r) => setText(changesOf(r.doc) ?? null),
          () => setText(null),
        );
      }}
    >
      <summary>What changed</summary>
      {text === undefined ? (
        <p role="status">Loading…</p>
      ) : text === null ? (
        <p class="muted">No comparison: the first report, or no report yet.</p>
      ) : (
        <SectionText markdown={text} />
      )}
    </details>
  );
}

/** The section's Markdown (its lists and links) rendered and sanitised as the report page does. */
function SectionText({ markdown }: { markdown: string }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!el.current) return;
    el.current.innerHTML = DOMPurify.sanitize(marked.parse(markdown, { async: false }), {
      FORBID_TAGS: ['style', 'form', 'input', 'img'],
      FORBID_ATTR: ['style'],
    });
    for (const a of [...el.current.querySelectorAll('a[href^="http"]')]) {
      a.setAttribute('rel', 'noopener noreferrer');
      a.setAttribute('target', '_blank');
    }
  }, [markdown]);
  return <div class="changes" ref={el} />;
}
