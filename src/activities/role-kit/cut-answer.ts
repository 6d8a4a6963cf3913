/**
 * What an answer cut off at its output limit finished. A writer asked again with more room pays
 * for a whole second answer (for a small local model, minutes), and is often cut off again; the
 * part it finished is usually worth keeping. Used by the researcher (a step's findings) and the
 * reporter (a report's body).
 */
import { partialField } from '../llm/partial-json';

/** Shorter than this, a kept part is not worth a step or a report: the answer is asked again. */
const MIN_KEPT = 80;

/** A line that ends a sentence, with the citations written after it ("… in 2023. [2][3]"). */
const SENTENCE_END = /[.!?…。！？]["'”’)\]]*(?:\s*\[[^\]\n]{1,40}\])*\s*$/;

/** The text without a trailing heading whose section never came (nor the blank lines before it). */
function withoutDanglingHeading(text: string): string {
  let kept = text.trimEnd();
  for (let prev = ''; prev !== kept;) {
    prev = kept;
    kept = kept.replace(/(?:^|\n)#{1,6} [^\n]*\s*$/, '').trimEnd();
  }
  return kept;
}

/** Up to the last sentence a paragraph finished, the citations right after it included. */
function upToLastSentence(text: string): string {
  const ends = [...text.matchAll(/[.!?…。！？]["'”’)\]]*(?:\s*\[[^\]\n]{1,40}\])*(?=\s|$)/g)];
  const last = ends.at(-1);
  return last ? text.slice(0, last.index + last[0].length) : '';
}

/**
 * The finished part of a cut-off answer: up to its last finished line when that line ends a
 * sentence (a list's finished items); else up to its last finished paragraph; else up to its last
 * finished sentence (one long paragraph). A heading left without its section is dropped. Undefined
 * when what is left is too short or ends no sentence (a list of fragments): the caller asks again.
 */
export function finishedPart(text: string): string | undefined {
  const body = text.replace(/\r\n/g, '\n');
  const lines = withoutDanglingHeading(body.slice(0, Math.max(0, body.lastIndexOf('\n'))));
  const candidates = [
    SENTENCE_END.test(lines.split('\n').at(-1) ?? '') ? lines : '',
    withoutDanglingHeading(body.slice(0, Math.max(0, body.lastIndexOf('\n\n')))),
    withoutDanglingHeading(upToLastSentence(body)),
  ];
  return candidates.find((kept) => kept.length >= MIN_KEPT && endsSomeSentence(kept));
}

/** Whether any line of the text ends a sentence (a list of bare titles does not). */
function endsSomeSentence(text: string): boolean {
  return text.split('\n').some((line) => SENTENCE_END.test(line));
}

/** Ends a text kept from an answer cut off at its output limit, until its writer takes it out
 *  (takeCutMark) and says so in the notes. In the text, so a retried activity that reuses the
 *  logged answer sees it too. */
const CUT_MARK = '\n\n<!-- cut off at the output limit -->';

/** The finished part of a cut-off text, marked as cut. */
export const markedCut = (kept: string): string => `${kept}${CUT_MARK}`;

/** A text without the cut-off mark, and whether it had one. */
export function takeCutMark(text: string): { text: string; cut: boolean } {
  return text.endsWith(CUT_MARK) ? { text: text.slice(0, -CUT_MARK.length), cut: true } : { text, cut: false };
}

/**
 * What a cut-off `{ text, summary }` answer (a step's findings) still gives: the part of its text
 * the model finished, marked as cut, and its summary when finished (else the kept text's opening,
 * which the writer's own summary rule shortens). Nothing when the text finished too little.
 */
export function salvageCitedText(raw: string): { text: string; summary: string } | undefined {
  const body = partialField(raw, 'text');
  if (!body) return undefined;
  const kept = body.complete ? body.text : finishedPart(body.text);
  if (!kept?.trim()) return undefined;
  const summary = partialField(raw, 'summary');
  return { text: markedCut(kept), summary: summary?.complete && summary.text.trim() ? summary.text : kept };
}
