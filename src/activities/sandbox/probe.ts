// Whether this worker's Docker engine can run sandboxes now: the engine answers and has the
// sandbox image. The researcher offers its python tool only then (RESEARCHER_PYTHON=auto), so a
// machine without Docker researches with the other tools instead of waiting for an engine that
// never comes. The answer is kept for a while: it is asked on every researcher turn.
import type Docker from 'dockerode';

/** How long a yes is kept. */
const TTL_MS = 60_000;
/** How long a no is kept: Docker that comes up later (or answered slowly once) is noticed within this time. */
const NO_TTL_MS = 5_000;
/** An engine that takes longer than this to answer counts as unusable for now. */
const PROBE_TIMEOUT_MS = 3_000;

export function createSandboxProbe(docker: Docker, image: string, now: () => number = Date.now): () => Promise<boolean> {
  let cached: { at: number; usable: Promise<boolean>; ttl: number } | undefined;
  return () => {
    if (!cached || now() - cached.at > cached.ttl) {
      const entry = { at: now(), usable: probe(docker, image), ttl: TTL_MS };
      void entry.usable.then((ok) => {
        if (!ok) entry.ttl = NO_TTL_MS;
      });
      cached = entry;
    }
    return cached.usable;
  };
}

async function probe(docker: Docker, image: string): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  const check = (async () => {
    await docker.ping();
    await docker.getImage(image).inspect();
    return true;
  })().catch(() => false);
  try {
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
