// The real model for the real-model tests: the llama-server and model that `npm run local-llm`
// provisions (scripts/local-llm.ts), started on a free port per test file. REAL_LLM_URL points the
// tests at a server already running instead (for working on them by hand).
import { installedLocalLlm, startLocalLlm } from '../../scripts/local-llm';

export interface RealLlm {
  baseUrl: string;
  stop(): Promise<void>;
}

/** Why the real-model tests cannot run here, or undefined when they can. */
export function localLlmMissing(): string | undefined {
  if (process.env.REAL_LLM_URL) return undefined;
  return installedLocalLlm() ? undefined : 'no local model: run `npm run local-llm -- --install-only`';
}

export async function startRealLlm(opts: { jinja: boolean; ctx: number; parallel: number }): Promise<RealLlm> {
  if (process.env.REAL_LLM_URL) return { baseUrl: process.env.REAL_LLM_URL, stop: async () => undefined };
  // The model is the pass's bottleneck: ahead of whatever else keeps the cores busy (with two busy
  // loops beside it at the same priority, calls took 3-5 times longer and the runs ran out of time).
  const server = await startLocalLlm({ port: 0, ...opts, nice: -10 });
  return { baseUrl: server.baseUrl, stop: () => server.stop() };
}
