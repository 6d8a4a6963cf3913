// The results of the steps a processing step depends on, as the files its program reads: what the
// coder is shown when it writes the program and when it writes up what the program printed.
import type { Store } from '../store';

export function filesBlock(files: { name: string; content: string }[]): string {
  return files.map((f) => `<file name="${f.name}">\n${f.content.slice(0, 6_000)}\n</file>`).join('\n') || '(none)';
}

/** The results of the steps a processing step depends on, as the files its program reads. */
export async function dependencyFiles(store: Pick<Store, 'getDocuments'>, researchId: string, keys: string[]) {
  const docs = await store.getDocuments(researchId, keys);
  return docs.map((d) => ({ name: `${d.key.replace(/\//g, '_')}.md`, content: d.content, sourceIds: d.sourceIds }));
}
