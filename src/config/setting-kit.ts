// The kinds of environment variable the configuration reads, and how an area of settings is
// declared. Each variable is declared once, in its area (src/config/<area>.ts) or its search
// provider (src/infra/search/<provider>.ts): its schema is its type, its `.describe()` its line in
// docs/configuration.md.
import { z } from 'zod';
import { ConfigError } from '../shared/errors';
import { LLM_ROLES, type LlmRole } from '../shared/constants';

export const port = z.coerce.number().int().min(0).max(65_535);

/** A whole number between `min` and `max`. */
export const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Comma-separated `host` or `host:port` entries (allow lists of the SSRF guard), or names. */
export const hostList = z
  .string()
  .default('')
  .transform((v) =>
    v
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** `true` or `false` (anything else refused), read as a boolean; unset: `fallback`. */
export const trueOrFalse = (fallback: boolean) =>
  z
    .enum(['true', 'false'], { message: 'expected true or false' })
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true');

export const optionalUrl = optionalString.pipe(z.url({ message: 'expected an http(s) URL' }).optional());

/** `auto`, `true` or `false`. */
export const autoTrueFalse = z.enum(['auto', 'true', 'false'], { message: 'expected auto, true or false' }).default('auto');

/** `name=number` pairs (SEARCH_RATE_LIMITS, TENANT_WEIGHTS, TENANT_PRIORITIES): each name must match
 *  `name`, each number `value`; a bad entry is named with the shape it should have (`what`). */
export const namedNumbers = (name: RegExp, value: z.ZodNumber, what: string) =>
  z
    .string()
    .default('')
    .transform((raw, ctx) => {
      const out: Record<string, number> = {};
      for (const entry of raw
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)) {
        const eq = entry.lastIndexOf('=');
        const key = entry.slice(0, eq);
        const n = value.safeParse(Number(entry.slice(eq + 1)));
        if (eq <= 0 || !name.test(key) || !n.success) {
          ctx.addIssue({ code: 'custom', message: `"${entry}" is not ${what}` });
          return z.NEVER;
        }
        out[key] = n.data;
      }
      return out;
    });

/** `<NAME>_<ROLE>` variables for every role, optional, each with the same description. */
export function roleSettings<N extends string, T extends z.ZodTypeAny>(name: N, schema: T, description: string) {
  return Object.fromEntries(LLM_ROLES.map((role) => [`${name}_${role.toUpperCase()}`, schema.optional().describe(description)])) as Record<
    `${N}_${Uppercase<LlmRole>}`,
    z.ZodOptional<T>
  >;
}

/** The values of an area's variables, as its schema parsed them. */
export type Settings<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

/** A group of settings: its section in docs/configuration.md (title, and rows in the order of
 *  `settings`) and how its part of the configuration is read from their values and, where it
 *  depends on another area's, from that area's part (`deps`). */
export interface Area<S extends z.ZodRawShape, D extends unknown[], R> {
  title: string;
  settings: S;
  read: (values: Settings<S>, ...deps: D) => R;
}

export function area<S extends z.ZodRawShape, D extends unknown[], R>(
  title: string,
  settings: S,
  read: (values: Settings<S>, ...deps: D) => R,
): Area<S, D, R> {
  return { title, settings, read };
}

export type ConfigIssue = { variable: string; reason: string };

/** Every issue, one line each, naming the variable (never its value: it may be a secret). */
export function invalidConfiguration(issues: ConfigIssue[]): ConfigError {
  return new ConfigError(`Invalid configuration:\n${issues.map((i) => `  ${i.variable}: ${i.reason}`).join('\n')}`, issues);
}
