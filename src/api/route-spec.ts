// A route's declaration beside its handler: method, path, summary, and the zod schemas of its
// parameters, body and answers, the same schemas the handler validates with and answers in. The
// route modules register their handlers through it (route, reply) and the OpenAPI document
// (openapi.ts) is assembled from the same declarations, so the two cannot say different things.
import type { RequestHandler, Response, Router } from 'express';
import type { z } from 'zod';
import { limitFor, type LimitKind } from './rate-limit';
import { bindIdempotencyKey } from './idempotency';

/** A body's schema: a bare schema is application/json; otherwise one schema per media type. */
export type Content = z.ZodType | Record<string, z.ZodType>;

export interface Answer {
  description: string;
  content?: Content;
}

export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The Express path below the router's mount point ('/research/:id'). */
  path: string;
  summary: string;
  /** Parameters by where they travel; a property's description becomes the parameter's. */
  params?: { path?: z.ZodObject; query?: z.ZodObject; header?: z.ZodObject };
  body?: { content: Content; required: boolean };
  responses: Record<number, Answer>;
  /** Statuses answered with the error body (src/api/middleware/errors.ts), described in openapi.ts. */
  errors?: number[];
  /** Served without a key (health checks). */
  public?: true;
  /** The tenant's rate limit this route is charged to (rate-limit.ts); absent: `reads`. Every
   *  route that starts runs is `submits`, whatever else it does. */
  limit?: LimitKind;
}

/** A route module's declarations by name; `satisfies` keeps each one's literal answer types. */
export type RouteTable = Record<string, RouteSpec>;

/** Serves `spec` with `handlers` on the router, charged to its rate limit once the router picked it. */
export function route(r: Router, spec: RouteSpec, ...handlers: RequestHandler[]): void {
  // A route that takes an Idempotency-Key binds it to the request (idempotency.ts) before its handler.
  const keyed = spec.params?.header?.shape['Idempotency-Key'] ? [bindIdempotencyKey(spec)] : [];
  r.route(spec.path)[spec.method](limitFor(spec.limit ?? 'reads'), ...keyed, ...handlers);
}

/** `T` without index signatures: a loose schema accepts more than it names, a reply must give what it names. */
type Known<T> = T extends readonly (infer U)[]
  ? Known<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Known<T[K]> }
    : T;
type JsonSchemaOf<C> = C extends z.ZodType ? C : C extends { 'application/json': infer J extends z.ZodType } ? J : never;
/** The JSON body a route declares for a status. */
export type JsonAnswer<S extends RouteSpec, K extends keyof S['responses']> = S['responses'][K] extends { content: infer C }
  ? Known<z.output<JsonSchemaOf<C>>>
  : never;

/** Answers with a status the route declares and a body of the schema it declares for it. */
export function reply<S extends RouteSpec, K extends keyof S['responses'] & number>(
  res: Response,
  _spec: S,
  status: K,
  body: JsonAnswer<S, K>,
): void {
  res.status(status).json(body);
}
