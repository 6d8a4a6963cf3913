// Text the database cannot hold is refused where it comes in, with a 400 naming where it is: a
// request accepted with a NUL in its question used to fail every write of its run afterwards.
// Covers the path (each segment decoded, a malformed % escape is a 400 too), the query, the
// headers and a parsed JSON body; a multipart form's fields are checked by its route after parsing.
import type { RequestHandler } from 'express';
import { ApiError } from '../../shared/errors';
import { findUnstorable } from '../../shared/text';

/** Throws a 400 when `value` holds a string PostgreSQL would refuse; `where` names the request part. */
export function refuseUnstorable(value: unknown, where: string): void {
  const found = findUnstorable(value);
  if (!found) return;
  const at = found.path ? `${where}.${found.path}` : where;
  throw new ApiError(400, 'invalid_text', `${at} ${found.reason}; remove it and send the request again`, { path: at });
}

function decodedSegments(path: string): string[] {
  return path.split('/').map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw new ApiError(400, 'invalid_path', `the path segment "${segment.slice(0, 80)}" has a malformed % escape`);
    }
  });
}

export const refuseUnstorableText: RequestHandler = (req, _res, next) => {
  for (const segment of decodedSegments(req.path)) refuseUnstorable(segment, 'path');
  refuseUnstorable(req.query, 'query');
  refuseUnstorable(req.headers, 'header');
  if (req.body !== undefined && !Buffer.isBuffer(req.body)) refuseUnstorable(req.body, 'body');
  next();
};
