// The page-extraction thread (see extract-thread.ts): HTML in, Markdown out, one page at a time.
import { parentPort } from 'node:worker_threads';
import { htmlToMarkdown } from './extract';

parentPort!.on('message', (m: { id: number; html: string; url: string }) => {
  try {
    parentPort!.postMessage({ id: m.id, value: htmlToMarkdown(m.html, m.url) });
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error).message ?? String(err) });
  }
});
