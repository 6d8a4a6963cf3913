// What a slide deck's title slide says of its run besides the report's title: the question asked
// and the day the run ended (or started, for one still going), as Temporal and PostgreSQL keep them.
import type { DeckCover } from '../export/pptx';
import { tenantRun, type ResearchContext } from './context';

export async function reportCover(ctx: ResearchContext, id: string, tenant: string): Promise<DeckCover> {
  const { desc } = await tenantRun(ctx, id, tenant);
  const row = await ctx.deps.store.runs.get(id);
  return { question: row?.question ?? '', date: desc.closeTime ?? desc.startTime };
}
