// A small model may answer with its prompt's example instead of its own answer: the planner's
// example plan, the rewrite's example queries. Code tells such a copy by two signs together: the
// text is the example's, and it shares no word with what it should be about (a copy of an example
// that happens to be on topic stands). Words are compared only in scripts that space them.

import { promptExamples } from '../llm/render';

/** The texts a prompt's example answers give in `fields` (a string, or a list of strings), empty ones left out. */
export function exampleTexts(promptFile: string, ...fields: string[]): string[] {
  return promptExamples(promptFile).flatMap((e) =>
    fields.flatMap((f) => [e[f]].flat().filter((v): v is string => typeof v === 'string' && v !== '')),
  );
}

/** The step titles of a prompt's example answers (their `field`: "steps", "followUpSteps"). */
export function exampleStepTitles(promptFile: string, field: string): string[] {
  return promptExamples(promptFile).flatMap((e) => {
    const steps = e[field];
    return Array.isArray(steps)
      ? steps.flatMap((st: unknown) => (st && typeof st === 'object' && 'title' in st ? [String(st.title)] : []))
      : [];
  });
}

/** Words too common to show what a text is about (English; other languages' are rarely 4+ letters and this common). */
const COMMON_WORDS = new Set(
  (
    'about after also been before between could does doing each find from have into just like made main many more most much ' +
    'only other over same should since some such than that their them then there these they this those what when where which ' +
    'while will with would your research sources source question answer step steps plan find know today year years'
  ).split(' '),
);
/** Scripts written without spaces between words: no word-level comparison there. */
const UNSPACED_SCRIPT = /[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/;

/** A text's words that show what it is about: letters only, four or more, compared by their first five. */
function topicWords(text: string): Set<string> {
  const words = text.toLowerCase().match(/\p{L}{4,}/gu) ?? [];
  return new Set(words.filter((w) => !COMMON_WORDS.has(w)).map((w) => w.slice(0, 5)));
}

/** Whether `text` is one of the example's texts, case and spacing aside. */
export function isExample(text: string, example: string[]): boolean {
  const norm = (t: string) => t.replace(/\s+/g, ' ').trim().toLowerCase();
  return example.some((e) => norm(e) === norm(text));
}

/** Whether a reference text can be compared by words: a spaced script, two topic words at least. */
export function comparable(reference: string): boolean {
  return !UNSPACED_SCRIPT.test(reference) && topicWords(reference).size >= 2;
}

/** Whether two texts share a word that shows what they are about. */
export function sharesTopic(text: string, reference: string): boolean {
  const words = topicWords(reference);
  return [...topicWords(text)].some((w) => words.has(w));
}

/** Whether `text` is a copy of the example that is not about `reference`. */
export function copiedOffTopic(text: string, example: string[], reference: string): boolean {
  return isExample(text, example) && comparable(reference) && !sharesTopic(text, reference);
}

/** Words as an echo is told by: lowercase runs of letters and digits, with the % and the hyphens of
 *  figures and ranges ("90%", "2010-2024") kept in them. */
const echoWords = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+(?:[-–%][\p{L}\p{N}]*)*%?/gu) ?? [];

/**
 * A title that is one of the example's with the example's subject swapped for the question's
 * ("Velmar prices 2010-2024" from "Solar prices 2010-2024"): it differs from the example, keeps all
 * but at most one of its words (two at least), and none of the words it keeps is in the question.
 * A title the question itself asks for ("Oil prices 2010-2024" for a question on oil prices
 * 2010-2024) keeps words of the question and stands.
 */
export function swappedExample(title: string, examples: string[], question: string): string | undefined {
  if (UNSPACED_SCRIPT.test(title)) return undefined;
  const words = echoWords(title);
  const asked = new Set(echoWords(question));
  return examples.find((example) => {
    const own = echoWords(example);
    if (words.join(' ') === own.join(' ')) return false;
    const kept = own.filter((w) => words.includes(w));
    return kept.length >= Math.max(2, own.length - 1) && kept.every((w) => !asked.has(w));
  });
}

/**
 * The part of a text that repeats one of its prompt's examples: the longest run of words it shares
 * with an example, when that run is four words or more (or all but one of a shorter example's) and
 * at least two of its words are in neither the question nor the sources (`reference`). A text on
 * the example's own topic says what its sources say, and stands.
 */
export function echoedExample(text: string, examples: string[], reference: string): string | undefined {
  if (UNSPACED_SCRIPT.test(text)) return undefined;
  const words = echoWords(text);
  const known = new Set(echoWords(reference));
  for (const example of examples) {
    const own = echoWords(example);
    const need = Math.max(2, Math.min(4, own.length - 1));
    for (let i = 0; i < words.length; i++)
      for (let j = 0; j < own.length; j++) {
        let n = 0;
        while (i + n < words.length && j + n < own.length && words[i + n] === own[j + n]) n++;
        const run = words.slice(i, i + n);
        if (n >= need && run.filter((w) => !known.has(w)).length >= 2) return run.join(' ');
      }
  }
  return undefined;
}
