// The floor bench's activities: no work, results about the size of a research run's.
const RESULT = 'x'.repeat(1500);

import { Context } from '@temporalio/activity';

export async function modelCall(role: string, ms = 0): Promise<string> {
  // A model call beats as it starts (the product's first beat is sent at once; later ones throttled).
  if (Context.current().info.heartbeatTimeoutMs) Context.current().heartbeat();
  if (ms) await new Promise((resolve) => setTimeout(resolve, ms));
  return `${role}: ${RESULT}`;
}

export async function runCode(): Promise<string> {
  return RESULT;
}

export async function writeRow(what: string): Promise<string> {
  return what;
}
