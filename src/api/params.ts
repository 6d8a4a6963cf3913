// A path, query or header parameter parsed with the schema its route declares. Parsed on its own,
// a zod issue has no path and the error middleware would call it "body"; here the 400 names where
// the value travelled and its name, as the OpenAPI document does.
import type { z } from 'zod';
import { ApiError } from '../shared/errors';

export type ParamPlace = 'path' | 'query' | 'header';

export function param<S extends z.ZodType>(where: ParamPlace, name: string, schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: [name, ...i.path].join('.'), in: where, message: i.message }));
  throw new ApiError(400, 'invalid_request', issues.map((i) => `${where} parameter ${i.path}: ${i.message}`).join('; '), issues);
}
