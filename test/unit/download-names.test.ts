// Content-Disposition for names of any script (RFC 6266 with RFC 5987's filename*): a header Node
// accepts whatever the name holds, with an ASCII stand-in and the exact name for clients that read it.
import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { contentDisposition } from '../../src/api/download';

/** What a client that reads filename* gets back. */
const exactName = (header: string) => decodeURIComponent(/filename\*=UTF-8''(.+)$/.exec(header)![1]!);

describe('download names', () => {
  it('gives an ASCII name as it is, quoted, without filename*', () => {
    expect(contentDisposition('attachment', 'report 2024.pdf')).toBe('attachment; filename="report 2024.pdf"');
  });

  it.each(['€ costs.pdf', '太陽光発電.docx', 'Grüße 😀.txt', 'naïve "quoted" \\ 100%.csv'])(
    'offers %s exactly in filename* and in ASCII in filename',
    (name) => {
      const header = contentDisposition('attachment', name);
      expect(header).toMatch(/^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9%!._~-]+$/);
      expect(/filename="([^"]*)"/.exec(header)![1]).not.toMatch(/["\\%]/);
      expect(exactName(header)).toBe(name);
      // Node's own check of a header value passes…
      expect(() => validateHeaderValue('content-disposition', header)).not.toThrow();
      // …where the raw name beyond Latin-1 (the 500 this replaced) does not pass.
      if ([...name].some((c) => c.codePointAt(0)! > 0xff))
        expect(() => validateHeaderValue('content-disposition', `attachment; filename="${name}"`)).toThrow();
    },
  );

  it('keeps accents readable in the fallback and drops control characters and unpaired surrogates', () => {
    expect(contentDisposition('inline', 'Café.html')).toBe('inline; filename="Cafe.html"; filename*=UTF-8\'\'Caf%C3%A9.html');
    const header = contentDisposition('attachment', 'a\r\nSet-Cookie: x\u0000\ud800.txt');
    expect(header.includes('\r') || header.includes('\n') || header.includes('\u0000')).toBe(false);
    expect(exactName(header)).toBe('a__Set-Cookie: x\ufffd.txt');
    expect(contentDisposition('attachment', '  ')).toBe('attachment; filename="download"');
  });
});
