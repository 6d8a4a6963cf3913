// The worker's workflow bundle entry: workflows only. How a change of workflow code reaches
// running executions: src/workflows/versioning.ts.
export { researchWorkflow } from './research';
export { researcherWorkflow } from './researcher';
export { coderWorkflow } from './coder';
export { ingestDocumentWorkflow } from './ingest';
export { webhookWorkflow } from './webhook';
export { admissionWorkflow } from './admission';
export { reportRewriteWorkflow } from './rewrite';
// Each type's Worker Versioning behaviour (PINNED or AUTO_UPGRADE), set on the functions above.
import './versioning';
