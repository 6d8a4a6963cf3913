// What the suite needs from the machine, decided once in global-setup and injected into tests.
// Under CI=true a missing service fails the run; on a laptop the tests that need it skip and say why.
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string | null;
    temporalCliPath: string | null;
    databaseUrl: string | null;
    dockerAvailable: boolean;
    workflowBundleCode: string;
    missing: string[];
  }
}

export function temporalAddress(): string | null {
  return inject('temporalAddress');
}
export function databaseUrl(): string | null {
  return inject('databaseUrl');
}
export function dockerAvailable(): boolean {
  return inject('dockerAvailable');
}
export function workflowBundle(): { code: string } {
  return { code: inject('workflowBundleCode') };
}
export function missingReason(): string {
  return inject('missing').join('; ');
}
