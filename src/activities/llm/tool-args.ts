// A model's function-call arguments read against the tool's zod schema: the JSON parsed, loosened
// where a tool accepts near misses, and checked; what is wrong comes back as a sentence for the
// repair request, not as an exception.
import type { z } from 'zod';

export type ArgsReading<T> = { ok: true; args: T } | { ok: false; problem: string };

export function readToolArgs<S extends z.ZodType>(
  name: string,
  raw: string,
  schema: S,
  loosen: (json: unknown) => unknown = (json) => json,
): ArgsReading<z.infer<S>> {
  let json: unknown;
  try {
    json = JSON.parse(raw || '{}');
  } catch {
    return { ok: false, problem: `the arguments of ${name} are not valid JSON: ${raw.slice(0, 200)}` };
  }
  const parsed = schema.safeParse(loosen(json));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    return { ok: false, problem: `the arguments of ${name} are invalid: ${issues}` };
  }
  return { ok: true, args: parsed.data };
}
