// A method a known path does not serve (TRACE, or PUT where only GET is) is a 405 with `Allow`
// (RFC 9110), not a 404 that says the path does not exist; OPTIONS lists them all (Express's own
// answer lists only the first router's, and a path's methods are spread over several). Known paths
// are the OpenAPI document's (the route declarations) and the few the document leaves out; they
// match as Express routes them: any letter case, an optional trailing slash.
import type { RequestHandler } from 'express';
import { ApiError } from '../shared/errors';
import { MOUNTED_ROUTES } from './openapi';

/** Served beside the API and not in its document: the page, its assets, the metrics, the document itself. */
const OTHER_ROUTES: [string, string][] = [
  ['/', 'GET'],
  ['/app.js', 'GET'],
  ['/app.css', 'GET'],
  ['/favicon.svg', 'GET'],
  ['/metrics', 'GET'],
  ['/v1/openapi.json', 'GET'],
  ['/docs', 'GET'],
];

interface KnownPath {
  pattern: RegExp;
  methods: Set<string>;
}

function knownPaths(): KnownPath[] {
  const byPath = new Map<string, Set<string>>();
  const add = (path: string, method: string) => {
    const methods = byPath.get(path) ?? new Set<string>();
    methods.add(method.toUpperCase());
    byPath.set(path, methods);
  };
  for (const { prefix, routes } of MOUNTED_ROUTES) for (const spec of Object.values(routes)) add(`${prefix}${spec.path}`, spec.method);
  for (const [path, method] of OTHER_ROUTES) add(path, method);
  return [...byPath].map(([path, methods]) => {
    const source = path
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    // Express answers HEAD with a GET route; OPTIONS is answered below.
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    return { pattern: new RegExp(`^${source === '' ? '/' : source}/?$`, 'i'), methods };
  });
}

export interface MethodHandlers {
  /** Before the routes: OPTIONS on a known path answers 204 with every method it serves. */
  options: RequestHandler;
  /** After every route and before the 404: a request that reaches it found no route for its method. */
  notAllowed: RequestHandler;
}

export function methodHandlers(): MethodHandlers {
  const known = knownPaths();
  const allowOf = (path: string) => {
    const k = known.find((p) => p.pattern.test(path));
    return k && { methods: k.methods, allow: [...k.methods].join(', ') };
  };
  return {
    options: (req, res, next) => {
      const found = req.method === 'OPTIONS' ? allowOf(req.path) : undefined;
      if (!found) return next();
      res.set('Allow', found.allow).status(204).end();
    },
    notAllowed: (req, res, next) => {
      const found = allowOf(req.path);
      if (!found || found.methods.has(req.method)) return next();
      res.set('Allow', found.allow);
      next(new ApiError(405, 'method_not_allowed', `${req.method} is not served on ${req.path}; it answers ${found.allow}`));
    },
  };
}
