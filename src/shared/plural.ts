// Counts in words people read (notes, errors, the CLI, the page): "1 link", "3 links", never "link(s)".

/** `n` and the noun, singular for one: `plural(1, 'link')` → "1 link", `plural(3, 'fact')` → "3 facts";
 *  an irregular plural is given (`plural(2, 'summary', 'summaries')`). */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** The verb after a count: "was" for one, "were" for the rest. */
export const wasWere = (n: number): string => (n === 1 ? 'was' : 'were');
