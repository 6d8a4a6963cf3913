// The ingestion workflow: one document into the knowledge base. Fetch (a URL), parse and chunk,
// embed in batches (a few requests in flight), finish. A killed worker or an embeddings outage
// only costs time: each batch is an activity that embeds the chunks still without a vector, so
// nothing is embedded or stored twice. A document that cannot be read ends `failed` with the
// parser's reason and no chunks.
import { condition, defineQuery, isCancellation, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { failureMessage } from '../shared/errors';
import type { IngestInput, IngestProgress } from '../shared/knowledge';
import { activitiesFor } from './proxies';

export const ingestProgressQuery = defineQuery<IngestProgress>('ingestProgress');

export async function ingestDocumentWorkflow(input: IngestInput): Promise<IngestProgress> {
  const calls = activitiesFor({ maxOutage: input.maxOutage, retry: input.retry });
  const progress: IngestProgress = { documentId: input.documentId, stage: input.fetch ? 'fetching' : 'parsing', chunks: 0, embedded: 0 };
  setHandler(ingestProgressQuery, () => progress);
  // The Temporal UI's current details: the stage and how many chunks have vectors.
  const show = () =>
    setCurrentDetails(
      `Document ${input.documentId}: ${progress.stage}` +
        (progress.chunks ? `, ${progress.embedded} of ${progress.chunks} chunks embedded` : '') +
        (progress.error ? `\n${progress.error}` : ''),
    );
  show();
  try {
    if (input.fetch)
      await calls.knowledge.fetchDocument.executeWithOptions({ summary: 'fetch the document' }, [{ documentId: input.documentId }]);
    progress.stage = 'parsing';
    show();
    const parsed = await calls.knowledge.parseDocument.executeWithOptions({ summary: 'parse and chunk' }, [
      { documentId: input.documentId },
    ]);
    progress.chunks = parsed.chunks;
    progress.stage = 'embedding';
    show();
    await embedAll(calls, input, progress, show);
    await calls.knowledge.finishDocument.executeWithOptions({ summary: 'ready' }, [{ documentId: input.documentId }]);
    progress.stage = 'ready';
    show();
  } catch (err) {
    if (isCancellation(err)) throw err; // the document was deleted: nothing left to mark
    progress.stage = 'failed';
    progress.error = failureMessage(err);
    await calls.knowledge.finishDocument.executeWithOptions({ summary: 'failed: no chunks kept' }, [
      { documentId: input.documentId, error: progress.error },
    ]);
    show();
  }
  return progress;
}

/** Batches of `input.batch` chunks, at most `input.parallel` requests at once. */
async function embedAll(
  calls: ReturnType<typeof activitiesFor>,
  input: IngestInput,
  progress: IngestProgress,
  show: () => void,
): Promise<void> {
  const batches: [number, number][] = [];
  for (let from = 0; from < progress.chunks; from += input.batch) batches.push([from, Math.min(progress.chunks, from + input.batch)]);
  let inFlight = 0;
  let failure: unknown;
  const running: Promise<void>[] = [];
  for (const [fromSeq, toSeq] of batches) {
    await condition(() => inFlight < input.parallel || failure !== undefined);
    if (failure !== undefined) break;
    inFlight++;
    running.push(
      calls.embedding.embedChunks
        .executeWithOptions({ summary: `embed chunks ${fromSeq}-${toSeq - 1} of ${progress.chunks}` }, [
          { documentId: input.documentId, fromSeq, toSeq },
        ])
        .then(
          (r) => {
            progress.embedded = Math.max(progress.embedded, r.embedded);
            show();
          },
          (err: unknown) => {
            failure ??= err;
          },
        )
        .finally(() => {
          inFlight--;
        }),
    );
  }
  await Promise.all(running);
  if (failure !== undefined) throw failure;
}
