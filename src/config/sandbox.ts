// The Docker sandbox coder programs (and the researcher's python tool) run in.
import { z } from 'zod';
import { area, autoTrueFalse, int } from './setting-kit';

const sandboxSettings = {
  SANDBOX_IMAGE: z.string().min(1).default('deep-research-sandbox:latest').describe('image coder programs run in'),
  SANDBOX_MEMORY_MB: int(64, 16_384).default(512).describe('memory of one sandbox run (memory = memory + swap)'),
  SANDBOX_CPUS: z.coerce.number().positive().max(16).default(1).describe('CPUs of one sandbox run'),
  SANDBOX_PIDS: int(16, 4_096).default(128).describe('processes of one sandbox run'),
  SANDBOX_TIMEOUT_S: int(1, 3_600).default(60).describe('wall-clock limit of one sandbox run, in seconds'),
  SANDBOX_CONCURRENCY: int(1, 64).default(2).describe('sandbox runs at once per worker (they have their own `<queue>-sandbox` task queue)'),
  DOCKER_SOCKET: z.string().min(1).default('/var/run/docker.sock').describe('the Docker engine the worker starts sandboxes with'),
  RESEARCHER_PYTHON: autoTrueFalse.describe(
    "the researcher's `python` tool: `auto` offers it while this worker's Docker engine answers and has the image (a yes is kept a minute, a no 5 s), `true` always (the sandbox queue's workers have Docker, this one need not), `false` never",
  ),
};

export const sandboxArea = area('Sandbox', sandboxSettings, (v) => ({
  sandbox: {
    image: v.SANDBOX_IMAGE,
    memoryMb: v.SANDBOX_MEMORY_MB,
    cpus: v.SANDBOX_CPUS,
    pids: v.SANDBOX_PIDS,
    timeoutSeconds: v.SANDBOX_TIMEOUT_S,
    concurrency: v.SANDBOX_CONCURRENCY,
    dockerSocket: v.DOCKER_SOCKET,
    /** The researcher's python tool: offered when this worker's Docker has the image (auto),
     *  always (true: the sandbox queue's workers have Docker, this one need not), or never. */
    researcherPython: v.RESEARCHER_PYTHON,
  },
}));
