// The worker's workflow bundle entry: workflows only.
export { researchWorkflow } from './research';
export { researcherWorkflow } from './researcher';
export { coderWorkflow } from './coder';
export { ingestDocumentWorkflow } from './ingest';
export { webhookWorkflow } from './webhook';
export { admissionWorkflow } from './admission';
// Each type's Worker Versioning behaviour (PINNED or AUTO_UPGRADE), set on the functions above.
import './versioning';
