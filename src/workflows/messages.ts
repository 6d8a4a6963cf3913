// Every signal, query and update of the research workflow, defined once and imported by the
// workflow, the API, the CLI and the tests.
import { defineQuery } from '@temporalio/workflow';
import type { Phase, RunStatus, Usage } from '../shared/schemas';

export interface ResearchStatusView {
  status: RunStatus;
  phase: Phase;
  question: string;
  locale?: string;
  usage: Usage;
  error?: string;
}

export const getStatusQuery = defineQuery<ResearchStatusView>('getStatus');
