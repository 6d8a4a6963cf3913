// Every statement's parameters made storable before PostgreSQL sees them, and a refusal of the
// data itself made permanent. A NUL or a lone surrogate in a run's question used to fail every
// write of the run with "invalid byte sequence" (22021) or "unsupported Unicode escape sequence"
// (22P05); the activities retried it as if the database were down, for hours. Text from outside
// (pages, search results, files, model output) reaches many write paths; cleaning it here, where
// every one of them passes, leaves none out. Refused text from a client is a 400 before this
// (src/api/middleware/text.ts): what is cleaned here had nobody to answer.
import type pg from 'pg';
import { ApplicationFailure } from '@temporalio/common';
import { ErrorType } from '../shared/errors';
import { storableText, storableValue } from '../shared/text';

/** A parameter as the database can store it: strings and JSON (objects, or JSON text) cleaned. */
export function storableParam(v: unknown): unknown {
  if (typeof v === 'string') return storableString(v);
  if (Array.isArray(v)) return v.map(storableParam);
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return storableValue(v);
  return v;
}

// JSON text carries a NUL or a lone surrogate as an escape (\u0000, \ud800), which jsonb refuses.
const SUSPECT_ESCAPE = /\\u(0000|d[89a-f][0-9a-f]{2})/i;

function storableString(s: string): string {
  const plain = storableText(s);
  if (!SUSPECT_ESCAPE.test(plain) || !/^\s*[[{"]/.test(plain)) return plain;
  try {
    return JSON.stringify(storableValue(JSON.parse(plain)));
  } catch {
    return plain; // not JSON: text that happens to hold a backslash-u, stored as it is
  }
}

/**
 * Class 22 ("data exception": invalid byte sequence, unsupported escape, out of range, bad
 * format) says the statement's data is wrong: the same statement fails the same way every time.
 */
export function permanentDataError(err: unknown): unknown {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string' || !code.startsWith('22')) return err;
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.create({
    message: `the database refused the data (SQLSTATE ${code}): ${message}`,
    type: ErrorType.InvalidInput,
    nonRetryable: true,
    cause: err instanceof Error ? err : undefined,
  });
}

type QueryFn = (...args: unknown[]) => unknown;

/** Wraps a client's query: parameters cleaned first, a data exception rethrown as permanent. */
export function guardClient(client: pg.ClientBase): void {
  const original = client.query.bind(client) as QueryFn;
  const guarded: QueryFn = (...args) => {
    const [first, second] = args;
    if (Array.isArray(second)) args[1] = second.map(storableParam);
    else if (isPlainQueryConfig(first)) args[0] = { ...first, values: first.values.map(storableParam) };
    // pool.query passes a callback (text, values, callback): its error is reclassified there.
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (err: unknown, ...rest: unknown[]) => (callback as QueryFn)(err ? permanentDataError(err) : err, ...rest);
    }
    const result = original(...args);
    return result instanceof Promise
      ? result.catch((err: unknown) => {
          throw permanentDataError(err);
        })
      : result;
  };
  (client as unknown as { query: QueryFn }).query = guarded;
}

function isPlainQueryConfig(v: unknown): v is { values: unknown[] } {
  return Boolean(
    v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype && Array.isArray((v as { values?: unknown }).values),
  );
}

/** Guards every client the pool opens (pool.query goes through them too). */
export function guardPool(pool: pg.Pool): pg.Pool {
  pool.on('connect', guardClient);
  return pool;
}
