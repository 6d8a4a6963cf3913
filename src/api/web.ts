// The web page at `/`: web/index.html, and web/src bundled by esbuild into one script and one
// stylesheet, in memory, the first time they are asked for (about a second; nothing is fetched
// from anywhere). Served with a CSP that allows only this origin's script, style and API.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { Router } from 'express';
import { WEB_DIR } from '../infra/paths';

export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface Bundle {
  js: string;
  css: string;
  html: string;
  icon: string;
}

let bundling: Promise<Bundle> | undefined;

/** The page's files, bundled once per process. */
export function webBundle(): Promise<Bundle> {
  bundling ??= build({
    entryPoints: [path.join(WEB_DIR, 'src', 'main.tsx')],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'silent',
  }).then((r) => ({
    js: r.outputFiles[0]!.text,
    css: readFileSync(path.join(WEB_DIR, 'app.css'), 'utf8'),
    html: readFileSync(path.join(WEB_DIR, 'index.html'), 'utf8'),
    icon: readFileSync(path.join(WEB_DIR, 'favicon.svg'), 'utf8'),
  }));
  bundling.catch(() => (bundling = undefined));
  return bundling;
}

export function webRoutes(): Router {
  const r = Router();
  const send = (type: string, pick: (b: Bundle) => string) => async (_req: unknown, res: import('express').Response) => {
    const b = await webBundle();
    res.set('Content-Security-Policy', PAGE_CSP);
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Referrer-Policy', 'no-referrer');
    res.set('Cache-Control', 'no-cache');
    res.type(type).send(pick(b));
  };
  r.get(
    '/',
    send('html', (b) => b.html),
  );
  r.get(
    '/app.js',
    send('application/javascript', (b) => b.js),
  );
  r.get(
    '/app.css',
    send('css', (b) => b.css),
  );
  // The tab's icon (index.html links it; without one, browsers ask for /favicon.ico and get a 404).
  r.get(
    '/favicon.svg',
    send('image/svg+xml', (b) => b.icon),
  );
  return r;
}
