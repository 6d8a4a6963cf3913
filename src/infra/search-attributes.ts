// The Temporal namespace's custom search attributes, checked at start. Every run writes
// ResearchTenant and the others (src/workflows/search-attributes.ts); on a namespace without them
// each start fails ("invalid search attribute") and the API answers 500 for every request. So a
// worker, the API and dev on an outside server check them first: missing ones are added where the
// connection may (a self-hosted server's operator service), and otherwise the start stops with the
// exact commands that add them.
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../shared/constants';
import type { Logger } from './logger';

const TYPES = proto.temporal.api.enums.v1.IndexedValueType;
type AttributeType = (typeof SEARCH_ATTRIBUTES)[keyof typeof SEARCH_ATTRIBUTES];
const TYPE_OF: Record<AttributeType, proto.temporal.api.enums.v1.IndexedValueType> = {
  Keyword: TYPES.INDEXED_VALUE_TYPE_KEYWORD,
  Int: TYPES.INDEXED_VALUE_TYPE_INT,
  Text: TYPES.INDEXED_VALUE_TYPE_TEXT,
};
const NAME_OF_TYPE = new Map(Object.entries(TYPE_OF).map(([name, t]) => [t, name]));

export class SearchAttributesMissing extends Error {
  override readonly name = 'SearchAttributesMissing';
}

/** The `temporal` commands that add these attributes (one per type: the CLI takes one --type). */
export function addCommands(names: string[], where: { namespace: string; address: string }): string[] {
  const byType = new Map<AttributeType, string[]>();
  for (const n of names) {
    const t = SEARCH_ATTRIBUTES[n as keyof typeof SEARCH_ATTRIBUTES];
    byType.set(t, [...(byType.get(t) ?? []), n]);
  }
  return [...byType].map(
    ([type, ns]) =>
      `temporal operator search-attribute create --address ${where.address} --namespace ${where.namespace} ${ns.map((n) => `--name ${n}`).join(' ')} --type ${type}`,
  );
}

/** What the check found: all there, or the ones it added. */
export type SearchAttributesCheck = { added: string[] };

/**
 * Checks the namespace's custom search attributes against SEARCH_ATTRIBUTES. Missing ones are
 * added when the server lets this connection; when it does not, or one exists with another type,
 * SearchAttributesMissing says which and gives the commands. A server that does not let the
 * connection list them either (no operator service for its credentials) is warned about, not
 * stopped for: the check cannot tell, and the runs may be fine.
 */
export async function ensureSearchAttributes(
  connection: Pick<Connection, 'operatorService'>,
  where: { namespace: string; address: string },
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<SearchAttributesCheck> {
  const all = Object.keys(SEARCH_ATTRIBUTES);
  let present: Record<string, proto.temporal.api.enums.v1.IndexedValueType>;
  try {
    present = (await connection.operatorService.listSearchAttributes({ namespace: where.namespace })).customAttributes ?? {};
  } catch (err) {
    log.warn(
      `could not list the search attributes of namespace ${where.namespace} (${(err as Error).message}); if runs fail with "invalid search attribute", add them: ${addCommands(all, where).join(' && ')}`,
    );
    return { added: [] };
  }
  const wrong = all.filter(
    (n) => present[n] !== undefined && present[n] !== TYPE_OF[SEARCH_ATTRIBUTES[n as keyof typeof SEARCH_ATTRIBUTES]],
  );
  if (wrong.length) {
    const found = wrong.map(
      (n) =>
        `${n} is ${NAME_OF_TYPE.get(present[n]!) ?? String(present[n])}, not ${SEARCH_ATTRIBUTES[n as keyof typeof SEARCH_ATTRIBUTES]}`,
    );
    throw new SearchAttributesMissing(
      `namespace ${where.namespace} has search attributes of the wrong type (${found.join('; ')}): this service cannot write them. Use another namespace (TEMPORAL_NAMESPACE), or one whose attributes match src/shared/constants.ts.`,
    );
  }
  const missing = all.filter((n) => present[n] === undefined);
  if (!missing.length) return { added: [] };
  try {
    await connection.operatorService.addSearchAttributes({
      namespace: where.namespace,
      searchAttributes: Object.fromEntries(missing.map((n) => [n, TYPE_OF[SEARCH_ATTRIBUTES[n as keyof typeof SEARCH_ATTRIBUTES]]])),
    });
  } catch (err) {
    throw new SearchAttributesMissing(
      `namespace ${where.namespace} lacks the search attributes every run writes (${missing.join(', ')}), and this connection may not add them (${(err as Error).message}). Add them, then start again:\n  ${addCommands(missing, where).join('\n  ')}\n(on Temporal Cloud: in the namespace's settings, or with tcld)`,
    );
  }
  log.info(`added the search attributes ${missing.join(', ')} to namespace ${where.namespace}`);
  return { added: missing };
}
