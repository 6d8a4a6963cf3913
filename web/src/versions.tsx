// A finished run's report versions, above the report: switch between them (1 is the run's own
// report), and ask for a rewrite from the same findings (another length, language, audience or
// instructions). A version being written is looked at again every two seconds until it is done.
import { useEffect, useState } from 'preact/hooks';
import { client } from './api';
import type { ReportVersionList } from '../../src/api/contract';

const POLL_MS = 2_000;

export function Versions({ id, version, onSelect }: { id: string; version: number; onSelect: (v: number) => void }) {
  const [list, setList] = useState<ReportVersionList['versions']>([]);
  const [open, setOpen] = useState(false);
  const [error, setError] = useState('');
  const load = () =>
    client.research.versions(id).then(
      (r) => setList(r.versions),
      (err: Error) => setError(err.message),
    );
  useEffect(() => void load(), [id]);
  const writing = list.some((v) => v.status === 'writing');
  useEffect(() => {
    if (!writing) return;
    const t = setTimeout(() => void load(), POLL_MS);
    return () => clearTimeout(t);
  }, [list]);

  const ready = list.filter((v) => v.status === 'ready');
  return (
    <div class="versions row">
      {ready.length > 1 && (
        <>
          <label for="report-version">Version</label>
          <select id="report-version" value={String(version)} onChange={(e) => onSelect(Number(e.currentTarget.value))}>
            {ready.map((v) => (
              <option key={v.version} value={String(v.version)}>
                {describe(v)}
              </option>
            ))}
          </select>
        </>
      )}
      {list
        .filter((v) => v.status !== 'ready')
        .map((v) => (
          <span key={v.version} role="status" class={v.status === 'failed' ? 'error' : 'muted'}>
            Version {v.version}: {v.status === 'writing' ? 'being written…' : `failed (${v.error ?? 'unknown'})`}
          </span>
        ))}
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
      {open ? (
        <RewriteForm
          id={id}
          done={(started) => {
            setOpen(false);
            if (started) void load();
          }}
        />
      ) : (
        <button type="button" class="secondary" onClick={() => setOpen(true)}>
          Rewrite this report
        </button>
      )}
    </div>
  );
}

function describe(v: ReportVersionList['versions'][number]): string {
  if (v.version === 1) return '1: the run’s report';
  const o = v.options as { reportLength?: string; locale?: string; audience?: string; model?: string };
  const parts = [o.reportLength, o.locale, o.audience && `for ${o.audience}`, o.model].filter(Boolean);
  return `${v.version}: ${parts.join(', ') || 'rewritten'}`;
}

/** The rewrite's options: empty fields are left as they were. */
function RewriteForm({ id, done }: { id: string; done: (started: boolean) => void }) {
  const [length, setLength] = useState('');
  const [locale, setLocale] = useState('');
  const [audience, setAudience] = useState('');
  const [instructions, setInstructions] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = {
      ...(length ? { reportLength: length as 'brief' | 'standard' | 'long' } : {}),
      ...(locale.trim() ? { locale: locale.trim() } : {}),
      ...(audience.trim() ? { audience: audience.trim() } : {}),
      ...(instructions.trim() ? { instructions: instructions.trim() } : {}),
    };
    if (!Object.keys(body).length) return setError('Change at least one thing: length, language, audience or instructions.');
    try {
      await client.research.rewrite(id, body);
      done(true);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="rewrite card" aria-label="Rewrite the report" onSubmit={(e) => void submit(e)}>
      <p class="muted">A new version from the same findings and sources: no new search, only the report’s model calls.</p>
      <label for="rewrite-length">Length</label>
      <select id="rewrite-length" value={length} onChange={(e) => setLength(e.currentTarget.value)}>
        <option value="">standard (default)</option>
        <option value="brief">brief</option>
        <option value="standard">standard</option>
        <option value="long">long</option>
      </select>
      <label for="rewrite-locale">Language (e.g. de, fr-FR)</label>
      <input id="rewrite-locale" maxLength={35} value={locale} onInput={(e) => setLocale(e.currentTarget.value)} />
      <label for="rewrite-audience">Audience</label>
      <input id="rewrite-audience" maxLength={300} value={audience} onInput={(e) => setAudience(e.currentTarget.value)} />
      <label for="rewrite-instructions">Instructions</label>
      <textarea
        id="rewrite-instructions"
        maxLength={2000}
        rows={3}
        value={instructions}
        onInput={(e) => setInstructions(e.currentTarget.value)}
      />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit">Write the new version</button>
      <button type="button" class="link" onClick={() => done(false)}>
        Cancel
      </button>
    </form>
  );
}
