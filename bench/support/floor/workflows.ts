// The floor bench's workflows (bench/temporal-floor.ts): the shape of a research run of the
// standard workload, with activities that do nothing. The parent upserts its search attributes
// as the run does, writes its row with a local activity at the same points, schedules the same
// activities on the same queues and starts one child workflow per step; a research step's child
// runs one activity, a processing step's three (the model, the sandbox, the model) and the parent
// judges it. `steps` and `processing` come from the run's index, as in the standard workload.
import { proxyActivities, proxyLocalActivities, startChild, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type * as acts from './activities';

export interface FloorInput {
  steps: number;
  processing: boolean;
  /** The coordinator's classification done inside the background activity: one activity less. */
  foldClassify: boolean;
  /** The first search attributes given at the start instead of upserted: one upsert less. */
  attributesAtStart: boolean;
  /** A step's activities run by the parent itself instead of by a child workflow per step. */
  flat: boolean;
  /** Model activities heartbeat once, with the model calls' heartbeat timeout (15 s). */
  beat: boolean;
  /** How long a model activity takes. */
  modelMs: number;
  queue: string;
}

const opts = { startToCloseTimeout: '1 minute' } as const;
const llm = (q: string, beat = false) =>
  proxyActivities<typeof acts>({ ...opts, taskQueue: `${q}-llm`, ...(beat ? { heartbeatTimeout: '15 seconds' } : {}) });
const sandbox = (q: string) => proxyActivities<typeof acts>({ ...opts, taskQueue: `${q}-sandbox` });
const { writeRow } = proxyLocalActivities<typeof acts>({ startToCloseTimeout: '10 seconds' });

const upsert = (phase: string) => upsertSearchAttributes({ ResearchPhase: [phase], ResearchStatus: ['running'] });

export async function floorRun(input: FloorInput): Promise<string> {
  const m = llm(input.queue, input.beat);
  if (!input.attributesAtStart) upsert('coordinating');
  await writeRow('started');
  if (!input.foldClassify) {
    await m.modelCall('classify', input.modelMs);
    await writeRow('classified');
    upsert('investigating');
  }
  await m.modelCall('background', input.modelMs);
  await writeRow('planned');
  upsert('researching');
  const research = Array.from({ length: input.processing ? input.steps - 1 : input.steps }, (_, k) => `s${k + 1}`);
  await Promise.all(research.map((id) => step(input, id, false)));
  if (input.processing) {
    await step(input, `s${input.steps}`, true);
    await m.modelCall('judge', input.modelMs);
  }
  upsert('reporting');
  await m.modelCall('report', input.modelMs);
  await writeRow('reported');
  upsert('done');
  await writeRow('done');
  return 'report';
}

async function step(input: FloorInput, id: string, processing: boolean): Promise<void> {
  if (input.flat) {
    await stepWork(input.queue, processing, input.beat, input.modelMs);
  } else {
    const child = await startChild(floorStep, {
      workflowId: `${workflowInfo().workflowId}-${id}`,
      args: [input.queue, processing, input.beat, input.modelMs],
    });
    await child.result();
  }
  await writeRow(`step ${id}`);
}

async function stepWork(queue: string, processing: boolean, beat: boolean, modelMs: number): Promise<void> {
  const m = llm(queue, beat);
  if (!processing) {
    await m.modelCall('researcher turn', modelMs);
    return;
  }
  await m.modelCall('write code', modelMs);
  await sandbox(queue).runCode();
  await m.modelCall('finish', modelMs);
}

export async function floorStep(queue: string, processing: boolean, beat: boolean, modelMs: number): Promise<string> {
  await stepWork(queue, processing, beat, modelMs);
  return 'step';
}
