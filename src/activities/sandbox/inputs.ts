// Input files named by source id (the researcher's python tool): the sandbox activity reads their
// text here, so that pages never travel in the workflow history. A crawled page gives its whole
// Markdown (a spreadsheet or CSV its rows as "Column: value; …" lines); any other source the text
// stored with it (a search snippet, a knowledge-base passage).
import { sourceIdFor } from '../search/sources';
import type { Store } from '../store';

/** Bytes of input files one program may get: its working directory is a 64 MB tmpfs. */
export const MAX_INPUT_BYTES = 32 * 1024 * 1024;

export interface SourceFiles {
  files: { name: string; content: string }[];
  /** Ids that are no source of this run. */
  missing: string[];
}

export async function sourceFiles(store: Store, researchId: string, ids: string[]): Promise<SourceFiles> {
  if (ids.length === 0) return { files: [], missing: [] };
  const unique = [...new Set(ids)];
  const sources = new Map((await store.getSources(researchId, unique)).map((s) => [s.sourceId, s]));
  // A source keeps the URL it was first seen under; its id comes from the page's final URL.
  const pageUrls = new Map<string, string>();
  if (sources.size > 0) {
    for (const url of await store.pageFinalUrls(researchId)) {
      try {
        pageUrls.set(sourceIdFor(url), url);
      } catch {
        // A stored URL that no longer parses names no source.
      }
    }
  }
  const files: SourceFiles['files'] = [];
  const missing: string[] = [];
  for (const id of unique) {
    const source = sources.get(id);
    if (!source) {
      missing.push(id);
      continue;
    }
    const url = pageUrls.get(id);
    const page = url ? await store.getPageByFinalUrl(researchId, url) : undefined;
    files.push({ name: `${id}.md`, content: page?.markdown ?? source.content });
  }
  return { files, missing };
}

export function inputBytes(files: { content: string }[]): number {
  return files.reduce((n, f) => n + Buffer.byteLength(f.content), 0);
}
