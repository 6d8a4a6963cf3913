// The one place that turns errors into HTTP answers: `{ error: { code, message, details? } }`.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ZodError } from 'zod';
import { ApiError } from '../../shared/errors';
import type { Logger } from '../../infra/logger';

export const notFound: RequestHandler = (req, _res, next) => {
  next(new ApiError(404, 'not_found', `no route for ${req.method} ${req.path}`));
};

export function zodDetails(err: ZodError) {
  return err.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
}

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) return;
    let status = 500;
    let body: { code: string; message: string; details?: unknown } = { code: 'internal', message: 'internal error' };
    if (err instanceof ApiError) {
      status = err.status;
      if (err.retryAfterSeconds !== undefined) res.set('Retry-After', String(err.retryAfterSeconds));
      body = { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) };
    } else if (err instanceof ZodError) {
      status = 400;
      body = {
        code: 'invalid_request',
        message: err.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
        details: zodDetails(err),
      };
    } else if (err?.type === 'entity.parse.failed') {
      status = 400;
      body = { code: 'invalid_json', message: `request body is not valid JSON: ${err.message}` };
    } else if (err?.type === 'entity.too.large') {
      status = 413;
      body = { code: 'payload_too_large', message: 'request body is too large' };
    } else if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) {
      status = err.status;
      body = { code: 'bad_request', message: String(err.message ?? 'bad request') };
    }
    if (status >= 500 && !(err instanceof ApiError)) log.error('request failed', { method: req.method, path: req.path, err });
    else if (status >= 500) log.warn(`${req.method} ${req.path}: ${body.message}`);
    res.status(status).json({ error: body });
  };
}
