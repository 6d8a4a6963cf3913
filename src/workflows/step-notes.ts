// Failures a step worked around (a search provider that failed while others answered, an MCP
// server that could not be reached, a tool that errored): one line per failing source with a
// count, returned in the step's result so that the run's notes and the report can say so.
import { summarize } from '../shared/plain';

export class StepNotes {
  private readonly bySource = new Map<string, { count: number; first: string }>();

  add(source: string, message: string): void {
    const seen = this.bySource.get(source);
    if (seen) seen.count++;
    else this.bySource.set(source, { count: 1, first: message });
  }

  /** Provider errors come as `<provider>: <message>` from the web search. */
  addProviderErrors(errors: string[]): void {
    for (const e of errors) {
      const cut = e.indexOf(': ');
      this.add(`search provider ${cut > 0 ? e.slice(0, cut) : 'unknown'}`, cut > 0 ? e.slice(cut + 2) : e);
    }
  }

  list(): string[] {
    return [...this.bySource].map(
      ([source, { count, first }]) => `${source} failed${count > 1 ? ` ${count} times` : ''}: ${summarize(first, 160)}`,
    );
  }
}
