// The floor bench's activities: no work, results about the size of a research run's.
const RESULT = 'x'.repeat(1500);

export async function modelCall(role: string): Promise<string> {
  return `${role}: ${RESULT}`;
}

export async function runCode(): Promise<string> {
  return RESULT;
}

export async function writeRow(what: string): Promise<string> {
  return what;
}
