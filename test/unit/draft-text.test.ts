// A structured answer read while it streams: the field's text at every cut of the JSON, and a
// stream's chunks joined into the completion a non-streamed answer would have been.
import { describe, expect, it } from 'vitest';
import { completeItems, partialField } from '../../src/activities/llm/partial-json';
import { CompletionAssembly, estimatedUsage } from '../../src/activities/llm/stream';
import { Draft, DraftTranscript } from '../../src/shared/draft';
import type { DraftEventData } from '../../src/shared/events';
import { cutPromptEcho, tidyHeadings } from '../../src/shared/report';

const answer = {
  title: 'Heat "pumps": a {review}',
  summary: 'They work [1].',
  markdown: '## Key points\n\n- COP of 3\u20134 in mild climates [1]\n- "Cold" climates: \\ lower [2] \u00e9\ud83d\ude00',
};

describe('partialField', () => {
  it('gives at every cut of the JSON a prefix of the field, and the whole field at the end', () => {
    const raw = JSON.stringify(answer, null, 1);
    let last = '';
    for (let cut = 0; cut <= raw.length; cut++) {
      const got = partialField(raw.slice(0, cut), 'markdown');
      const text = got?.text ?? '';
      expect(answer.markdown.startsWith(text), `cut ${cut}: ${JSON.stringify(text)}`).toBe(true);
      expect(text.length).toBeGreaterThanOrEqual(last.length);
      last = text;
    }
    expect(partialField(raw, 'markdown')).toEqual({ text: answer.markdown, complete: true });
  });

  it('reads only the object\u2019s own keys, not a key-like text inside another value', () => {
    const raw = '{"title": "\\"markdown\\": \\"no\\"", "meta": {"markdown": "nested"}, "markdown": "yes, this';
    expect(partialField(raw, 'markdown')).toEqual({ text: 'yes, this', complete: false });
  });

  it('gives nothing for a field that is null or not there yet', () => {
    expect(partialField('{"action": "research", "directAnswer": null}', 'directAnswer')).toBeUndefined();
    expect(partialField('{"action": "answer_dir', 'directAnswer')).toBeUndefined();
    expect(partialField('not json', 'markdown')).toBeUndefined();
  });
});

describe('completeItems', () => {
  const verdicts = {
    note: { verdicts: 'not this one' },
    verdicts: [
      { id: 'c1', verdict: 'supported', reason: 'It says "89%", {exactly}.' },
      { id: 'c2', verdict: 'partial', reason: 'Only the year [2010].' },
      3,
      { id: 'c3', verdict: 'unsupported', reason: 'No.' },
    ],
  };

  it('gives at every cut of the JSON the elements written whole, in order, and all of them at the end', () => {
    const raw = JSON.stringify(verdicts, null, 1);
    let last = 0;
    for (let cut = 0; cut <= raw.length; cut++) {
      const got = completeItems(raw.slice(0, cut), 'verdicts') ?? [];
      expect(got, `cut ${cut}`).toEqual(verdicts.verdicts.slice(0, got.length));
      expect(got.length).toBeGreaterThanOrEqual(last);
      last = got.length;
    }
    expect(completeItems(raw, 'verdicts')).toEqual(verdicts.verdicts);
    // A number is whole only once what follows it shows that it ended.
    expect(completeItems('{"verdicts": [{"id": "c1"}, 3', 'verdicts')).toEqual([{ id: 'c1' }]);
  });

  it('gives nothing for a field that is not a list or not there yet', () => {
    expect(completeItems('{"verdicts": null}', 'verdicts')).toBeUndefined();
    expect(completeItems('{"verd', 'verdicts')).toBeUndefined();
  });
});

describe('CompletionAssembly', () => {
  const head = { id: 'c1', object: 'chat.completion.chunk' as const, created: 1, model: 'm' };
  it('joins content and tool-call deltas, keeps the finish reason and the last chunk\u2019s usage', () => {
    const a = new CompletionAssembly();
    a.add({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] });
    a.add({ ...head, choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: null }] });
    a.add({
      ...head,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'search', arguments: '{"q"' } }] },
          finish_reason: null,
        },
      ],
    });
    a.add({
      ...head,
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ': "x"}' } }] }, finish_reason: 'tool_calls' }],
    });
    a.add({ ...head, choices: [], usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 } });
    const c = a.completion('fallback', 99);
    expect(c.choices[0]!.message.content).toBe('Hello');
    expect(c.choices[0]!.message.tool_calls).toEqual([
      { id: 't1', type: 'function', function: { name: 'search', arguments: '{"q": "x"}' } },
    ]);
    expect(c.choices[0]!.finish_reason).toBe('tool_calls');
    expect(c.usage).toEqual({ prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 });
    expect(estimatedUsage.has(c)).toBe(false);
  });

  it('estimates the usage of a stream that sent none, and says it is an estimate', () => {
    const a = new CompletionAssembly();
    a.add({ ...head, choices: [{ index: 0, delta: { content: 'x'.repeat(40) }, finish_reason: 'stop' }] });
    const c = a.completion('fallback', 123);
    expect(c.usage).toEqual({ prompt_tokens: 123, completion_tokens: 10, total_tokens: 133 });
    expect(estimatedUsage.has(c)).toBe(true);
  });
});

describe('Draft and DraftTranscript', () => {
  const piece = (part: string, offset: number, text: string, more: Partial<DraftEventData> = {}): DraftEventData => ({
    part,
    attempt: 1,
    offset,
    text,
    ...(part.startsWith('section-') ? { heading: `Heading ${part.slice(8)}` } : {}),
    ...more,
  });

  it('gives sections in their order, a later one held until the one before it ends', () => {
    const t = new DraftTranscript('NOTE\n');
    const out = [
      t.take(piece('section-2', 0, 'Second ')),
      t.take(piece('section-1', 0, 'First ')),
      t.take(piece('section-2', 7, 'done.', { final: true })),
      t.take(piece('section-1', 6, 'done.', { final: true })),
    ];
    expect(out).toEqual(['', 'NOTE\n## Heading 1\n\nFirst ', '', 'done.\n\n## Heading 2\n\nSecond done.']);
    const d = new Draft();
    for (const p of [piece('section-2', 0, 'B'), piece('section-1', 0, 'A')]) d.apply(p);
    expect(d.markdown()).toBe('## Heading 1\n\nA\n\n## Heading 2\n\nB');
  });

  it('says a part starts again, also after it was final, and then writes the new text', () => {
    const t = new DraftTranscript();
    t.take(piece('report', 0, 'Rejected draft.', { final: true }));
    const again = t.take(piece('report', 0, 'New', { restart: true, reason: 'the draft is being written again' }));
    expect(again).toBe('\n\n*(This part starts again: the draft is being written again.)*\n\nNew');
    expect(t.take(piece('report', 3, ' text.', { final: true }))).toBe(' text.');
    // A piece that does not continue the text (joined mid-draft) is left out.
    expect(t.take(piece('report', 99, 'lost'))).toBe('');
  });

  it('ends with the rest of the answer when the draft began it, else with the checked report whole', () => {
    const answer = new DraftTranscript('NOTE');
    answer.take(piece('answer', 0, 'Hello!', { final: true }));
    expect(answer.ending('Hello!\n\n---\nfooter')).toBe('\n\n---\nfooter');
    const report = new DraftTranscript('NOTE\n');
    report.take(piece('report', 0, 'Costs fell [3].', { final: true }));
    expect(report.ending('# Title\n\nCosts fell [1].')).toBe(
      '\n\n---\n\n**The report, its citations checked:**\n\n# Title\n\nCosts fell [1].',
    );
    expect(new DraftTranscript().ending('whole')).toBe('whole');
  });
});

describe('cutPromptEcho', () => {
  const labels = ['user_message', 'findings', 'references'];
  const report = '## Overview\n\nVelmar is an alloy [1].\n\n## Detailed analysis\n\nIt was developed in 2019 [2].';

  it('keeps a report up to where it starts repeating its prompt (as a small model wrote one)', () => {
    const echo = `${report}\n\n## Current date and time\n\nMonday, 2026-11-30 20:22 UTC.\n\n## User message\n\nWhat is the Velmar alloy?\n\n## Findings\n\n<finding key=`;
    expect(cutPromptEcho(echo, labels)).toEqual({ markdown: report, cut: true });
    // A data block's tag cuts with the heading that introduces it.
    expect(cutPromptEcho(`${report}\n\n## Findings\n\n<finding key="step/a/1">\nx`, labels)).toEqual({ markdown: report, cut: true });
    expect(cutPromptEcho(`${report}\n<references>\n1. x`, labels)).toEqual({ markdown: report, cut: true });
    expect(cutPromptEcho(`${report}\nCurrent date and time: Monday.`, labels)).toEqual({ markdown: report, cut: true });
    expect(cutPromptEcho(`${report}\n\n## Current date\n\nMonday, 2026-11-30 (UTC).`, labels)).toEqual({ markdown: report, cut: true });
  });

  it('leaves a report alone that only uses the same words', () => {
    const own = `${report}\n\n## Findings\n\nThe findings agree [1]. The user message asked about cost.`;
    expect(cutPromptEcho(own, labels)).toEqual({ markdown: own, cut: false });
  });
});

describe('tidyHeadings', () => {
  const prompt =
    '1. `## Key points`: 3 to 6 bullets, each a finding in a full sentence (not a page title), cited.\n2. `## Overview`: one or two paragraphs.';

  it("gives headings that copied the prompt's layout their names back, and drops the empty ones", () => {
    const draft =
      '## Key points: 3 to 6 bullets, each a finding in a full sentence (not a page title), cited.\n\n## Overview: one or two paragraphs.\n\nThe line opened in 2022 [1].\n\n## Detailed analysis:\n\n- It has 19 stops [2].';
    expect(tidyHeadings(draft, prompt)).toEqual({
      markdown: '## Overview\n\nThe line opened in 2022 [1].\n\n## Detailed analysis\n\n- It has 19 stops [2].',
      changed: true,
    });
  });

  it('drops a last line cut off inside its Markdown, and the heading it leaves empty', () => {
    const draft = '## Key points\n\n- The alloy is 610 MPa strong [1].\n- **Velmar\n\n## Sources seen\n\n- [Velmar data](http://exa';
    expect(tidyHeadings(draft, prompt)).toEqual({ markdown: '## Key points\n\n- The alloy is 610 MPa strong [1].', changed: true });
  });

  it('leaves headings of its own alone, a colon and all', () => {
    const own = '## Costs: what the audit found\n\nIt cost 312 million kronor [1].\n\n### Overruns\n\nMostly utilities [1].';
    expect(tidyHeadings(own, prompt)).toEqual({ markdown: own, changed: false });
  });
});
