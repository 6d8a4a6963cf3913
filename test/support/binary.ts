// Reads a supertest answer as bytes (a PNG, a PDF, a .docx or .pptx): `.buffer(true).parse(binary)`.
import type { Response } from 'superagent';

export const binary = (res: Response, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};
