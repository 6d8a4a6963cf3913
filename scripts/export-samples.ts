// Renders a sample report (a table, citations, a chart, references) through the same HTML and PDF
// exporters the API uses, and pictures both for docs/: the HTML screenshotted by headless
// Chromium, the PDF's first page rasterised by pdftoppm. Needs Debian's `chromium` and
// `poppler-utils`: `npm run docs:exports`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { reportHtml } from '../src/api/export/html';
import { reportPdf } from '../src/api/export/pdf';
import type { ReportDoc } from '../src/shared/report-doc';

const DOCS = path.resolve(import.meta.dirname, '..', 'docs');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const chartPath = '/v1/research/research-sample/artifacts/calc-101-lcoe.png';

const doc: ReportDoc = {
  title: 'How much cheaper has solar power become since 2010?',
  notes: [{ text: 'Research stopped early: the token budget (200000) was spent. The report is written from what was found.', kind: 'run' }],
  sections: [
    {
      heading: '',
      markdown: `Utility-scale solar photovoltaics became the cheapest new source of electricity in most markets: the
global weighted-average levelised cost of electricity (LCOE) fell by about **89%** between 2010 and
2022 [1], driven mostly by module prices, which fell faster than any other cost component [2][3].

| Year | LCOE (USD/kWh) | Module price (USD/W) |
|---|---|---|
| 2010 | 0.445 [1] | 2.02 [3] |
| 2016 | 0.129 [1] | 0.57 [3] |
| 2022 | 0.049 [1] | 0.28 [2] |

Installation and balance-of-system costs fell too, but more slowly [2]; financing costs now weigh
more in the total than the hardware in several markets [1].`,
    },
  ],
  charts: [{ artifactId: 'calc-101-lcoe.png', path: chartPath }],
  references: [
    {
      n: 1,
      sourceId: 'S1',
      cited: true,
      title: 'Renewable Power Generation Costs in 2022',
      url: 'https://www.irena.org/Publications/2023/Aug/Renewable-Power-Generation-Costs-in-2022',
    },
    {
      n: 2,
      sourceId: 'S2',
      cited: true,
      title: 'Levelized Cost of Energy+ 2023',
      url: 'https://www.lazard.com/research-insights/2023-levelized-cost-of-energyplus/',
    },
    {
      n: 3,
      sourceId: 'S3',
      cited: true,
      title: 'Photovoltaics Report',
      url: 'https://www.ise.fraunhofer.de/en/publications/studies/photovoltaics-report.html',
    },
  ],
};

function chartSvg(): string {
  const data = [
    [2010, 0.445],
    [2012, 0.253],
    [2014, 0.176],
    [2016, 0.129],
    [2018, 0.088],
    [2020, 0.061],
    [2022, 0.049],
  ] as const;
  const bars = data
    .map(([y, v], i) => {
      const h = (v / 0.5) * 220;
      const x = 60 + i * 70;
      return `<rect x="${x}" y="${260 - h}" width="44" height="${h}" fill="#2563eb"/><text x="${x + 22}" y="280" font-size="13" text-anchor="middle">${y}</text><text x="${x + 22}" y="${252 - h}" font-size="12" text-anchor="middle">${v}</text>`;
    })
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="560" height="300" style="background:#fff;font-family:sans-serif"><text x="280" y="22" font-size="16" text-anchor="middle">Solar PV LCOE, USD/kWh</text><line x1="50" y1="260" x2="550" y2="260" stroke="#333"/>${bars}</svg>`;
}

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
  await page.setContent(`<body style="margin:0">${chartSvg()}</body>`);
  const chart = await page.locator('svg').screenshot({ type: 'png' });
  const images = new Map([[chartPath, { contentType: 'image/png', bytes: chart }]]);
  const report = { title: doc.title, locale: 'en-US', doc };

  const html = reportHtml(report, images);
  await page.setContent(html);
  await page.screenshot({ path: path.join(DOCS, 'export-html.png'), fullPage: true });

  const pdf = await reportPdf(report, images);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'dr-export-'));
  writeFileSync(path.join(tmp, 'report.pdf'), pdf);
  execFileSync('pdftoppm', [
    '-png',
    '-r',
    '70',
    '-f',
    '1',
    '-l',
    '1',
    '-singlefile',
    path.join(tmp, 'report.pdf'),
    path.join(DOCS, 'export-pdf'),
  ]);
  console.log(
    `wrote docs/export-html.png and docs/export-pdf.png (HTML ${html.length} bytes, PDF ${pdf.length} bytes, PNG ${readFileSync(path.join(DOCS, 'export-pdf.png')).length} bytes)`,
  );
} finally {
  await browser.close();
}
