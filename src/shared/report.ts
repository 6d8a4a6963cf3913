// Report assembly, done by code and not by the prompt: reference numbers in first-citation order,
// the findings the reporter reads (with [S…] ids turned into [n]), and the final Markdown with
// checked citations, linked charts, the run's notes and the numbered reference list.
import { checkCitations, sourceIdsToNumbers } from './citations';

/** Characters of one finding the reporter is shown. */
export const FINDING_CHARS = 12_000;

export interface Finding {
  key: string;
  content: string;
  sourceIds: string[];
}

export interface Reference {
  n: number;
  sourceId: string;
  url: string;
  title: string;
}

/** The API path of an artifact a coder step wrote; the report links charts with it. */
export function artifactPath(researchId: string, artifactId: string): string {
  return `/v1/research/${encodeURIComponent(researchId)}/artifacts/${encodeURIComponent(artifactId)}`;
}

/** Source ids in the order the findings first cite them: the order of the reference numbers. */
export function citationOrder(findings: Finding[]): string[] {
  const order: string[] = [];
  for (const f of findings) for (const id of f.sourceIds) if (!order.includes(id)) order.push(id);
  return order;
}

/** Numbers the sources that exist, in citation order; ids with no stored source get no number. */
export function numberReferences(order: string[], sources: { sourceId: string; url: string; title: string }[]): Reference[] {
  const byId = new Map(sources.map((s) => [s.sourceId, s]));
  return order
    .filter((id) => byId.has(id))
    .map((id, i) => ({ n: i + 1, sourceId: id, url: byId.get(id)!.url, title: byId.get(id)!.title }));
}

/** The reporter's inputs: findings citing [n], and the reference list those numbers point at. */
export function reporterInputs(findings: Finding[], refs: Reference[]): { findings: string; references: string } {
  const numberOf = new Map(refs.map((r) => [r.sourceId, r.n]));
  return {
    findings:
      findings
        .map((f) => `<finding key="${f.key}">\n${sourceIdsToNumbers(f.content, numberOf).slice(0, FINDING_CHARS)}\n</finding>`)
        .join('\n') || '(no findings)',
    references: refs.map((r) => `[${r.n}] ${r.title} — ${r.url}`).join('\n') || '(no sources)',
  };
}

const ARTIFACT_LINK = /\(artifact:([A-Za-z0-9._-]+)\)/g;

export interface AssembledReport {
  markdown: string;
  /** The draft's body after the citation check, without title, notes, charts or references. */
  body: string;
  removedCitations: number[];
  /** Links and bare URLs the draft made up (not a retrieved source, not an artifact of the run). */
  removedLinks: RemovedLink[];
}

export interface RemovedLink {
  url: string;
  reason: string;
}

/** A citation the claim check flagged (partly supported) or removed (not supported). */
export interface CitationCheckRecord {
  n: number;
  sourceId: string;
  claim: string;
  verdict: 'partial' | 'unsupported';
  reason: string;
  action: 'flagged' | 'removed';
}

const normalizeLink = (url: string) => url.replace(/#.*$/, '').replace(/\/+$/, '');

/**
 * Every link, image and bare URL in the body must point at a source the run retrieved or at one
 * of its own artifacts: anything else is unlinked (a link keeps its text, an image and a bare URL
 * go) and recorded with the reason. Code is left alone.
 */
export function groundLinks(markdown: string, allowed: (url: string) => boolean): { markdown: string; removed: RemovedLink[] } {
  const removed: RemovedLink[] = [];
  const parts = markdown.split(/(```[\s\S]*?```|`[^`\n]*`)/g);
  const out = parts.map((part, i) => {
    if (i % 2 === 1) return part;
    const kept: string[] = [];
    // Kept links wait behind private-use markers while bare URLs are looked for.
    const hold = (text: string) => `\uE000${kept.push(text) - 1}\uE000`;
    let text = part.replace(/(!?)\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g, (m, bang: string, label: string, url: string) => {
      if (allowed(url)) return hold(m);
      removed.push({ url, reason: bang ? 'image not made by this run' : 'link to an address the run did not retrieve' });
      return bang ? '' : label;
    });
    text = text.replace(/<(https?:\/\/[^>\s]+)>|\bhttps?:\/\/[^\s<>()[\]"'`]*[^\s<>()[\]"'`.,;:!?]/g, (m, inAngle: string | undefined) => {
      const url = inAngle ?? m;
      if (allowed(url)) return hold(m);
      removed.push({ url, reason: 'bare URL the run did not retrieve' });
      return '';
    });
    return text.replace(/\uE000(\d+)\uE000/g, (_m, n: string) => kept[Number(n)]!);
  });
  return { markdown: out.join(''), removed };
}

/**
 * Builds the stored report from the reporter's draft: every [n] checked against the references,
 * `(artifact:id)` links the findings really made turned into API paths (others into `#`), every PNG
 * chart a step produced linked once, the run's notes quoted under the title, and the references.
 */
export function assembleReport(args: {
  researchId: string;
  title: string;
  draft: string;
  findings: Finding[];
  refs: Reference[];
  notes: string[];
}): AssembledReport {
  const checked = checkCitations(args.draft, args.refs.length);
  const artifactIds = new Set(args.findings.flatMap((f) => [...f.content.matchAll(ARTIFACT_LINK)].map((m) => m[1]!)));
  const link = (id: string) => artifactPath(args.researchId, id);
  const linked = checked.markdown.replace(ARTIFACT_LINK, (_m, id: string) => (artifactIds.has(id) ? `(${link(id)})` : '(#)'));
  const sourceUrls = new Set(args.refs.map((r) => normalizeLink(r.url)));
  const artifacts = new Set([...artifactIds].map(link));
  const grounded = groundLinks(linked, (url) => url === '#' || artifacts.has(url) || sourceUrls.has(normalizeLink(url)));
  const body = grounded.markdown;
  const charts = [...artifactIds].filter((id) => id.toLowerCase().endsWith('.png') && !body.includes(link(id)));
  const chartMd = charts.length ? `\n\n## Charts\n\n${charts.map((id) => `![${id}](${link(id)})`).join('\n\n')}` : '';
  const notes = grounded.removed.length
    ? [...args.notes, `Removed ${grounded.removed.length} link(s) to addresses this run never retrieved.`]
    : args.notes;
  const noteBlock = notes.length ? `\n\n> ${notes.join('\n> ')}\n` : '';
  // The reference list holds what the text cites; the other sources follow as "Also consulted".
  const entry = (x: Reference) => `[${x.title.replace(/[[\]]/g, '')}](${x.url})`;
  const cited = args.refs.filter((r) => checked.used.includes(r.n));
  const consulted = args.refs.filter((r) => !checked.used.includes(r.n));
  const refMd =
    (cited.length ? `\n\n## References\n\n${cited.map((x) => `${x.n}. ${entry(x)}`).join('\n')}\n` : '') +
    (consulted.length ? `\n${cited.length ? '' : '\n'}## Also consulted\n\n${consulted.map((x) => `- ${entry(x)}`).join('\n')}\n` : '');
  return {
    markdown: `# ${args.title}${noteBlock}\n\n${body.trim()}${chartMd}${refMd}`,
    body: checked.markdown,
    removedCitations: checked.removed,
    removedLinks: grounded.removed,
  };
}
