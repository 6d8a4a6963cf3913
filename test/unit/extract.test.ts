import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { htmlToMarkdown, toReadable } from '../../src/activities/crawl/extract';
import { extractThread, OFF_THREAD_BYTES } from '../../src/activities/crawl/extract-thread';
import { longPage } from '../support/long-page';
import { SITE_DIR } from '../support/fixture-site';

describe('readable text', () => {
  it('extracts the article of an HTML page as Markdown, without navigation or scripts', () => {
    const html = readFileSync(path.join(SITE_DIR, 'articles', 'solar-costs.html'), 'utf8').replace(
      '</body>',
      '<script>document.body.innerHTML = "pwned"</script></body>',
    );
    const r = htmlToMarkdown(html, 'http://fixture.test/articles/solar-costs.html');
    expect(r.title).toBe('Utility-scale solar costs fell sharply');
    expect(r.markdown).toMatch(/fell by about 89% between\s+2010 and 2022/);
    expect(r.markdown).toMatch(/\| ?2022 ?\| ?0\.049 ?\||2022\s+0\.049/);
    expect(r.markdown).not.toMatch(/pwned|© Fixture Energy Journal/);
  });

  it('extracts the text of a PDF', async () => {
    const r = await toReadable(
      readFileSync(path.join(SITE_DIR, 'reports', 'wind.pdf')),
      'application/pdf',
      'http://fixture.test/reports/wind.pdf',
    );
    expect(r.markdown).toBe('Wind power capacity reached 1000 GW in 2023.');
  });

  it('pretty-prints JSON and keeps text as it is', async () => {
    expect((await toReadable(Buffer.from('{"a":1}'), 'application/json', 'http://x')).markdown).toBe('```json\n{\n  "a": 1\n}\n```');
    expect((await toReadable(Buffer.from('plain'), 'text/plain', 'http://x')).markdown).toBe('plain');
  });

  it('parses a large page on the extraction thread: the same Markdown, and the calling thread stays free', async () => {
    const url = 'http://fixture.test/deep/long.html';
    const small = readFileSync(path.join(SITE_DIR, 'articles', 'solar-costs.html'));
    expect(small.length).toBeLessThan(OFF_THREAD_BYTES);
    const before = extractThread.started;
    await toReadable(small, 'text/html', url);
    expect(extractThread.started).toBe(before); // small pages stay here

    const big = Buffer.from(longPage(600));
    // While the thread parses, this thread's timers keep firing; a parse here would block them
    // for its whole length (no tick at all). Counted, not timed: a loaded machine stretches both.
    const t0 = performance.now();
    const inline = htmlToMarkdown(big.toString('utf8'), url);
    const inlineMs = performance.now() - t0;
    let ticks = 0;
    const tick = setInterval(() => ticks++, 5);
    const [a, b] = await Promise.all([toReadable(big, 'text/html', url), toReadable(big, 'text/html', url)]);
    clearInterval(tick);
    expect(extractThread.started).toBe(before + 1);
    expect(a).toEqual(inline);
    expect(b).toEqual(inline);
    expect(inlineMs).toBeGreaterThan(200);
    expect(ticks).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
