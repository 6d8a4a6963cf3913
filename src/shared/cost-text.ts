// A usage's cost as people read it, alike in the CLI, the web page and the Temporal UI's details.
import type { Usage } from './schemas';

/** `$0.0123`; `cost unknown` when none of its tokens had a price; `$0.0123 + unpriced tokens` when
 *  some had none. Never `$0.0000` for work whose price is not known. */
export function costText(u: Pick<Usage, 'costUsd' | 'unpricedTokens'>): string {
  const dollars = `$${u.costUsd.toFixed(4)}`;
  if (!u.unpricedTokens) return dollars;
  return u.costUsd > 0 ? `${dollars} + unpriced tokens` : 'cost unknown';
}
