// Ask: the question, an effort preset (its numbers and mode shown and adjustable, the same as the
// API's EFFORT_PRESETS), report length, review, budget, language.
import { useState } from 'preact/hooks';
import { client } from './api';
import type { EFFORT_PRESETS, Effort, ReportLength, ResearchMode, ResearchRequest, RunModels } from '../../src/shared/schemas';
import type { LlmRole } from '../../src/shared/constants';

/** The roles a run may name a model for (tsc holds the list to the server's, every role once). */
const ROLE_SET = { coordinator: 1, planner: 1, researcher: 1, coder: 1, judge: 1, reporter: 1 } satisfies Record<LlmRole, 1>;
const ROLES = Object.keys(ROLE_SET) as LlmRole[];

// The presets are written out here (the page bundles no server code); tsc holds them to the API's.
type Presets = typeof EFFORT_PRESETS;
const PRESETS = {
  quick: { queryCount: 2, maxSteps: 2, maxToolRounds: 4, maxReflectionAttempts: 0, maxResearchLoops: 0 },
  standard: { queryCount: 3, maxSteps: 4, maxToolRounds: 8, maxReflectionAttempts: 2, maxResearchLoops: 1 },
  deep: { queryCount: 5, maxSteps: 8, maxToolRounds: 14, maxReflectionAttempts: 3, maxResearchLoops: 2 },
} as const satisfies { [K in Effort]: Omit<Presets[K], 'reportLength' | 'researchMode'> };
const LENGTHS = { quick: 'brief', standard: 'standard', deep: 'long' } as const satisfies { [K in Effort]: Presets[K]['reportLength'] };
/** The mode each preset runs in (a preset without one: the plan's gap reflection). */
const MODES = { quick: 'plan', standard: 'plan', deep: 'supervisor' } as const satisfies {
  [K in Effort]: Presets[K] extends { researchMode: infer M } ? M : 'plan';
};
type Numbers = { -readonly [K in keyof (typeof PRESETS)['standard']]: number };

const LABELS: Record<keyof Numbers, string> = {
  queryCount: 'Search queries at the start',
  maxSteps: 'Steps in the plan (at most)',
  maxToolRounds: 'Tool rounds per step',
  maxReflectionAttempts: 'Reruns after a failed check',
  maxResearchLoops: 'Follow-up rounds for gaps',
};

/** "role=model, role=model" as the run's models; the server says which models it allows. */
function modelsByRole(text: string): RunModels {
  const out: Record<string, string> = {};
  for (const pair of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [role = '', model = ''] = pair.split('=').map((s) => s.trim());
    if (!(ROLES as string[]).includes(role) || !model) throw new Error(`Models: "${pair}" is not role=model (roles: ${ROLES.join(', ')})`);
    out[role] = model;
  }
  return out as RunModels;
}

export function AskForm() {
  const [question, setQuestion] = useState('');
  const [effort, setEffort] = useState<Effort>('standard');
  const [numbers, setNumbers] = useState<Numbers>({ ...PRESETS.standard });
  const [reportLength, setReportLength] = useState<ReportLength>('standard');
  const [mode, setMode] = useState<ResearchMode>('plan');
  const [autoAccept, setAutoAccept] = useState(false);
  const [memory, setMemory] = useState(true);
  const [maxTokens, setMaxTokens] = useState('');
  const [maxCostUsd, setMaxCostUsd] = useState('');
  const [deadline, setDeadline] = useState('');
  const [locale, setLocale] = useState('');
  const [models, setModels] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const options: NonNullable<ResearchRequest['options']> = {
        effort,
        ...numbers,
        reportLength,
        researchMode: mode,
        autoAcceptPlan: autoAccept,
        ...(memory ? {} : { memory: false }),
      };
      if (maxTokens) options.maxTokens = Number(maxTokens);
      if (maxCostUsd) options.maxCostUsd = Number(maxCostUsd);
      if (deadline) options.deadline = deadline;
      if (locale) options.locale = locale;
      if (models.trim()) options.models = modelsByRole(models);
      const body: ResearchRequest = { question, options };
      const r = await client.research.start(body);
      location.hash = `#/run/${encodeURIComponent(r.id)}`;
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card ask" onSubmit={submit} aria-labelledby="ask-title">
      <h1 id="ask-title">Ask a research question</h1>
      <label for="question">Question</label>
      <textarea id="question" required rows={3} maxLength={4000} value={question} onInput={(e) => setQuestion(e.currentTarget.value)} />
      <fieldset class="effort">
        <legend>Effort</legend>
        {(Object.keys(PRESETS) as Effort[]).map((k) => (
          <label key={k} class="choice">
            <input
              type="radio"
              name="effort"
              value={k}
              checked={effort === k}
              onChange={() => {
                setEffort(k);
                setNumbers({ ...PRESETS[k] });
                setReportLength(LENGTHS[k]);
                setMode(MODES[k]);
              }}
            />
            {k}
          </label>
        ))}
        <div class="grid">
          {(Object.keys(LABELS) as (keyof Numbers)[]).map((k) => (
            <label key={k}>
              {LABELS[k]}
              <input
                type="number"
                min={k === 'maxSteps' || k === 'queryCount' || k === 'maxToolRounds' ? 1 : 0}
                value={numbers[k]}
                onInput={(e) => setNumbers({ ...numbers, [k]: Number(e.currentTarget.value) })}
              />
            </label>
          ))}
          <label>
            Report length
            <select value={reportLength} onChange={(e) => setReportLength(e.currentTarget.value as ReportLength)}>
              <option value="brief">brief</option>
              <option value="standard">standard</option>
              <option value="long">long (written section by section)</option>
            </select>
          </label>
          <label>
            After the plan's steps
            <select value={mode} onChange={(e) => setMode(e.currentTarget.value as ResearchMode)}>
              <option value="plan">follow-up steps for the gaps found</option>
              <option value="supervisor">a supervisor decides each next wave, and when done</option>
            </select>
          </label>
        </div>
      </fieldset>
      <details>
        <summary>Review, budget and language</summary>
        <label class="choice">
          <input type="checkbox" checked={autoAccept} onChange={(e) => setAutoAccept(e.currentTarget.checked)} />
          Start researching without waiting for my review of the plan
        </label>
        <label class="choice">
          <input type="checkbox" checked={memory} onChange={(e) => setMemory(e.currentTarget.checked)} />
          Use and add to what runs remember about me (the Memory screen)
        </label>
        <div class="grid">
          <label>
            Token budget
            <input type="number" min={1} value={maxTokens} onInput={(e) => setMaxTokens(e.currentTarget.value)} />
          </label>
          <label>
            Cost budget (USD)
            <input type="number" min={0} step="0.01" value={maxCostUsd} onInput={(e) => setMaxCostUsd(e.currentTarget.value)} />
          </label>
          <label>
            Deadline (e.g. 30m, 2h)
            <input type="text" pattern="\d+(ms|s|m|h|d)" value={deadline} onInput={(e) => setDeadline(e.currentTarget.value)} />
          </label>
          <label>
            Language (e.g. de-DE; empty: the question's)
            <input type="text" value={locale} onInput={(e) => setLocale(e.currentTarget.value)} />
          </label>
          <label>
            Models (e.g. researcher=gpt-4.1-mini, reporter=gpt-4.1; empty: the server's)
            <input type="text" value={models} onInput={(e) => setModels(e.currentTarget.value)} />
          </label>
        </div>
      </details>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Starting…' : 'Start research'}
      </button>
    </form>
  );
}
