// A small model may answer with its prompt's example instead of its own answer: the planner's
// example plan, the rewrite's example queries. Code tells such a copy by two signs together: the
// text is the example's, and it shares no word with what it should be about (a copy of an example
// that happens to be on topic stands). Words are compared only in scripts that space them.

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
