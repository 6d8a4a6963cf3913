// "What changed since": figures are compared as written, and the section sits under the title (the
// run's notes stay at the end), replaced (not repeated) when a retried activity writes it again.
import { describe, expect, it } from 'vitest';
import { dayOf, figuresIn, withChangesSection } from '../../src/activities/roles/changes';
import { reportMarkdown, type ReportDoc } from '../../src/shared/report-doc';

describe('what changed since', () => {
  it('reads figures as written, with thousands separators and decimals', () => {
    expect(figuresIn('Solar LCOE fell 89% from 2010 to 2022')).toEqual(['89', '2010', '2022']);
    expect(figuresIn('1,200 MW at 0.049 USD/kWh, up 3.5%')).toEqual(['1200', '0.049', '3.5']);
    expect(figuresIn('no figures here')).toEqual([]);
  });

  it("puts the section under the title, before the body (the run's notes at the end), and replaces an earlier one", () => {
    const report: ReportDoc = {
      title: 'Solar costs',
      notes: [{ text: 'A note.', kind: 'run' }],
      sections: [{ heading: 'Key points', markdown: '- Costs fell [1].' }],
      charts: [],
      references: [{ n: 1, sourceId: 'S1', url: 'https://a.example', title: 'A', cited: true }],
    };
    const once = withChangesSection(report, '## What changed since May 1, 2026\n\n- first');
    expect(reportMarkdown(once)).toBe(
      '# Solar costs\n\n## What changed since May 1, 2026\n\n- first\n\n## Key points\n\n- Costs fell [1].\n\n## Notes on this run\n\n> A note.\n\n## References\n\n1. [A](https://a.example/)\n',
    );
    const twice = reportMarkdown(withChangesSection(once, '## What changed since May 1, 2026\n\n- second'));
    expect(twice.match(/What changed since/g)).toHaveLength(1);
    expect(twice).toContain('- second');
    expect(twice).not.toContain('- first');
    expect(twice).toContain('## Key points');
  });

  it("writes the day in the report's language", () => {
    const d = new Date('2026-11-23T20:00:00Z');
    expect(dayOf(d, 'en-US')).toBe('November 23, 2026');
    expect(dayOf(d, 'de-DE')).toBe('23. November 2026');
    expect(dayOf(d, 'not a locale!')).toBe('November 23, 2026');
  });
});
