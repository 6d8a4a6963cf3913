// Short text for the terminal, shared by the client commands and the live view of a run.
import { costText } from '../shared/cost-text';
import type { ResearchView } from '../shared/messages';

/** At most `n` characters, an ellipsis where it was cut. */
export const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** A run's tokens and cost; empty when it has none yet. */
export const money = (u: ResearchView['usage']) =>
  u ? `${(u.promptTokens + u.completionTokens).toLocaleString('en-US')} tokens · ${costText(u)}` : '';
