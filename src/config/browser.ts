// Headless Chromium for pages whose text is rendered by JavaScript (src/activities/crawl/browser.ts).
import { Duration } from '../shared/schemas';
import { area, autoTrueFalse, int, optionalString } from './setting-kit';

const browserSettings = {
  BROWSER: autoTrueFalse.describe(
    'whether this worker reads JavaScript-rendered pages in headless Chromium (polls the `<queue>-browser` task queue): `auto` when `CHROMIUM_PATH` or `chromium` on `PATH` is found, `true` always, `false` never (see [Pages that need a browser](tools.md#pages-that-need-a-browser))',
  ),
  BROWSER_CONCURRENCY: int(1, 16)
    .default(1)
    .describe('pages rendered at once per worker, each in a render host of its own (a process with its own Chromium)'),
  BROWSER_TIMEOUT_MS: int(1_000, 300_000)
    .default(30_000)
    .describe('time limit of one page rendered in the browser, from the first request to the text taken'),
  BROWSER_MAX_BYTES: int(100_000, 500_000_000)
    .default(20_000_000)
    .describe('bytes all responses of one rendered page may add up to (document, scripts, data; images, media and fonts are not loaded)'),
  BROWSER_MAX_MEMORY_MB: int(256, 65_536)
    .default(1_536)
    .describe(
      "memory one page's render may hold, in MB: the private resident memory of the render host's whole process tree (Chromium's processes and the host); past it the page is skipped and its browser stopped",
    ),
  BROWSER_WAIT: optionalString
    .pipe(Duration.optional())
    .describe(
      'how long a page that needs a browser waits for a worker with one to take it before it is skipped, saying so (a deployment with `BROWSER=false` everywhere); unset: 1 minute',
    ),
  CHROMIUM_PATH: optionalString.describe('the Chromium executable pages are rendered with; by default `chromium` on `PATH`'),
};

export const browserArea = area(
  'Browser',
  browserSettings,
  /** `searchPath`: PATH, where `chromium` is looked for. */
  (v, searchPath: string) => ({
    browser: {
      /** BROWSER: poll the browser queue when Chromium is found (auto), always, or never. */
      mode: v.BROWSER,
      /** CHROMIUM_PATH; undefined: `chromium` on PATH. */
      chromiumPath: v.CHROMIUM_PATH,
      searchPath,
      concurrency: v.BROWSER_CONCURRENCY,
      timeoutMs: v.BROWSER_TIMEOUT_MS,
      maxBytes: v.BROWSER_MAX_BYTES,
      /** BROWSER_MAX_MEMORY_MB: memory of one render's process tree. */
      maxMemoryMb: v.BROWSER_MAX_MEMORY_MB,
    },
  }),
);
