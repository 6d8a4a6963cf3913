// The worker's workflow bundle entry: workflows only. An incompatible change is a new patch id (the
// SDK's `patched`, e.g. research/investigate.ts BACKGROUND_PAGES_PATCH) in auto-upgrade workflows
// and nothing in pinned ones (src/workflows/versioning.ts).
export { researchWorkflow } from './research';
export { researcherWorkflow } from './researcher';
export { coderWorkflow } from './coder';
export { ingestDocumentWorkflow } from './ingest';
export { webhookWorkflow } from './webhook';
export { admissionWorkflow } from './admission';
export { reportRewriteWorkflow } from './rewrite';
// Each type's Worker Versioning behaviour (PINNED or AUTO_UPGRADE), set on the functions above.
import './versioning';
