// The thread of pglite-initdb.ts: creates the data directory with initdb (opening it runs initdb
// when it is empty), closes it, and says whether that worked; the thread then ends.
import { parentPort, workerData } from 'node:worker_threads';

const { dataDir, startParams } = workerData as { dataDir: string; startParams: string[] };
try {
  const [{ PGlite }, { vector }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-pgvector')]);
  const db = await PGlite.create({ dataDir, extensions: { vector }, startParams });
  await db.close();
  parentPort!.postMessage({});
} catch (err) {
  parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
}
