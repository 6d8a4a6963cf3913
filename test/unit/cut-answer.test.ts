// What an answer cut off at its output limit keeps (src/activities/role-kit/cut-answer.ts).
import { describe, expect, it } from 'vitest';
import { finishedPart, salvageCitedText, takeCutMark } from '../../src/activities/role-kit/cut-answer';

const P1 = 'Utility-scale solar fell from 0.445 to 0.049 USD per kWh between 2010 and 2022. [S1a2b3c4d]';
const P2 = 'Module prices did most of the work, with installation costs following later. [S5e6f7a8b]';

describe('finishedPart', () => {
  it('keeps the finished paragraphs and drops the one the limit cut', () => {
    expect(finishedPart(`${P1}\n\n${P2}\n\nBattery prices fell by almost nine tenths over the same`)).toBe(`${P1}\n\n${P2}`);
  });

  it("keeps a list's finished items when the limit cut inside the list, without a heading left empty", () => {
    const cut = `## Key points\n- ${P1}\n- ${P2}\n- Battery packs cost 139 USD`;
    expect(finishedPart(cut)).toBe(`## Key points\n- ${P1}\n- ${P2}`);
    expect(finishedPart(`${P1}\n\n${P2}\n\n## Outlook\n\nPrices may`)).toBe(`${P1}\n\n${P2}`);
  });

  it('keeps one long paragraph up to its last finished sentence, the citation after it included', () => {
    const cut = `${P1} ${P2} Battery packs cost 139 USD per kWh in 2023, and`;
    expect(finishedPart(cut)).toBe(`${P1} ${P2}`);
  });

  it('a line cut mid-sentence is not kept: the last finished paragraph is', () => {
    expect(finishedPart(`${P1}\n\nA wrapped paragraph that goes on\nand on without an end to`)).toBe(P1);
  });

  it('keeps nothing when what finished is too short or ends no sentence', () => {
    expect(finishedPart('Solar fell. And then')).toBeUndefined();
    expect(
      finishedPart('## Sources\n- Solar costs (2023 edition) by the agency\n- Battery storage outlook for the decade\n- Wind'),
    ).toBeUndefined();
    expect(finishedPart('')).toBeUndefined();
  });
});

describe('salvageCitedText', () => {
  it("keeps a cut-off findings answer's finished text, marked as cut, with its summary when finished", () => {
    const raw = `{"summary": "Solar got cheaper.", "text": ${JSON.stringify(`${P1}\n\n${P2}\n\nMore`).slice(0, -1)}`;
    const kept = salvageCitedText(raw)!;
    expect(kept.summary).toBe('Solar got cheaper.');
    expect(takeCutMark(kept.text)).toEqual({ text: `${P1}\n\n${P2}`, cut: true });
  });

  it('uses the kept text as the summary when the summary never came, and nothing when the text finished too little', () => {
    const raw = `{"text": ${JSON.stringify(`${P1}\n\nMore`).slice(0, -1)}`;
    expect(salvageCitedText(raw)).toMatchObject({ summary: P1 });
    expect(salvageCitedText('{"text": "Solar fell by')).toBeUndefined();
    expect(salvageCitedText('{"summary": "x"')).toBeUndefined();
  });

  it('a text without the mark is not cut', () => {
    expect(takeCutMark(P1)).toEqual({ text: P1, cut: false });
  });
});
