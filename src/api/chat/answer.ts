// The answer a chat completion ends with: the report (Markdown with its references, links made
// absolute so a chat client can follow them), a direct answer, what the run waits for, or where to
// fetch a report still being written; always with a footer naming the run, which is how the next
// request of the conversation finds the session (conversation.ts).
import type { ResearchView } from '../../shared/messages';
import { absoluteLinks } from '../../shared/report-doc';
import type { ResearchService } from '../research-service';
import type { FollowEnd } from './follow';
import type { RunRef } from './schemas';

export interface RunLinks {
  runId: string;
  sessionId: string;
  /** The API's address as the client reached it (`http://host:port`). */
  base: string;
}

export function runRef(l: RunLinks, status: string): RunRef {
  const run = `${l.base}/v1/research/${encodeURIComponent(l.runId)}`;
  return { runId: l.runId, sessionId: l.sessionId, status, reportUrl: `${run}/report`, eventsUrl: `${run}/events` };
}

export function footer(l: RunLinks): string {
  const ref = runRef(l, '');
  return `\n\n---\n*Deep research run \`${l.runId}\` · [report](${ref.reportUrl}) · [run](${l.base}/#/run/${encodeURIComponent(l.runId)})*\n`;
}

async function reportText(research: ResearchService, l: RunLinks, tenant: string, view: ResearchView | undefined): Promise<string> {
  if (view?.status === 'failed') return `The research failed: ${view.error ?? 'no reason was recorded'}.`;
  if (view?.status === 'cancelled') return 'The research was cancelled before it wrote a report.';
  if (view?.outcome === 'cancelled_at_review') return 'Nobody reviewed the plan in time, so the run was cancelled.';
  try {
    return absoluteLinks((await research.report(l.runId, tenant)).markdown.trim(), l.base);
  } catch {
    return `The run ended (${view?.status ?? 'status unknown'}) without a report I could read; see ${runRef(l, '').reportUrl}.`;
  }
}

function reviewText(l: RunLinks, view: ResearchView | undefined): string {
  const run = `${l.base}/v1/research/${encodeURIComponent(l.runId)}`;
  if (view?.clarificationQuestion) {
    return `Before researching, the run asks: **${view.clarificationQuestion}**\n\nAnswer it with \`POST ${run}/clarification\` \`{"answer": "…"}\`, or in the web page.`;
  }
  const plan = view?.plan;
  const steps = plan?.steps.map((s, i) => `${i + 1}. ${s.title}`).join('\n') ?? '';
  return (
    `The plan awaits your review${plan ? ` (version ${plan.version})` : ''}:\n\n${steps}\n\n` +
    `Approve it with \`POST ${run}/plan/approve\` \`{"planVersion": ${plan?.version ?? 1}}\`, revise it with \`POST ${run}/plan/revise\`, or use the web page; the report is then at ${run}/report.`
  );
}

function stillRunningText(l: RunLinks, view: ResearchView | undefined): string {
  const ref = runRef(l, '');
  return (
    `The research is still running${view ? ` (${view.phase})` : ''} and goes on without this request. ` +
    `Fetch the report when it is ready with \`GET ${ref.reportUrl}\` (with your API key; 404 until then), ` +
    `follow it with \`GET ${ref.eventsUrl}\` (server-sent events), or open ${l.base}/#/run/${encodeURIComponent(l.runId)}.`
  );
}

/** Reads of a run's view, 250 ms apart, waiting for the plan a review event announced. */
const REVIEW_READS = 20;

/** The answer's text, the run's status view (for usage), read once the follow ended. */
export async function finalAnswer(
  research: ResearchService,
  l: RunLinks,
  tenant: string,
  end: FollowEnd,
): Promise<{ content: string; view: ResearchView | undefined }> {
  const read = () => research.get(l.runId, tenant).catch(() => undefined);
  let view = await read();
  // The review event that ended the follow can come before the run's view shows the plan (a loaded
  // machine answered one review with an empty plan): the view is read again, for a few seconds.
  for (let i = 0; end === 'awaiting_review' && !view?.plan && !view?.clarificationQuestion && i < REVIEW_READS; i++) {
    await new Promise((r) => setTimeout(r, 250));
    view = await read();
  }
  const text =
    end === 'awaiting_review'
      ? reviewText(l, view)
      : end === 'timeout' || end === 'left'
        ? stillRunningText(l, view)
        : await reportText(research, l, tenant, view);
  return { content: text + footer(l), view };
}

export function chatUsage(view: ResearchView | undefined) {
  const u = view?.usage;
  return u
    ? { prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.promptTokens + u.completionTokens }
    : undefined;
}
