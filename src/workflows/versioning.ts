// How each workflow type moves between versions of the worker deployment (Worker Versioning; the
// worker opts in when TEMPORAL_WORKER_BUILD_ID is set, see src/worker.ts and docs/scaling-and-deploys.md,
// "Deploying a new version"). Unversioned workers ignore these.
//
// PINNED: an execution runs to its end on the build it started on; the old build's workers stay
// until the server reports that version drained. Its code may change in any way from one build to
// the next. AUTO_UPGRADE: an execution moves to the deployment's current version at its next
// workflow task, so the new build replays the old history.
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import type { VersioningBehavior } from '@temporalio/common';
import { admissionWorkflow } from './admission';
import { coderWorkflow } from './coder';
import { ingestDocumentWorkflow } from './ingest';
import { researchWorkflow } from './research';
import { researcherWorkflow } from './researcher';
import { reportRewriteWorkflow } from './rewrite';
import { webhookWorkflow } from './webhook';

export const VERSIONING_BEHAVIORS = {
  // A run waits for review for days and lives through many deploys. Pinned, its code never
  // changes under it; at its long waits it continues as new on a newer target build
  // (research/new-build.ts), so it holds an old build only while it works.
  researchWorkflow: 'PINNED',
  // A step lives minutes and is most of the code that changes (the ReAct loop, the coder): it
  // finishes where it started, so step changes need no patches. A parent that upgraded starts
  // its next steps on the new build.
  researcherWorkflow: 'PINNED',
  coderWorkflow: 'PINNED',
  // One document's ingestion, minutes long.
  ingestDocumentWorkflow: 'PINNED',
  // A tenant's admission queue lives as long as the tenant has runs (continue-as-new): pinned, no
  // old build could ever be retired. It upgrades.
  admissionWorkflow: 'AUTO_UPGRADE',
  // One delivery, retried up to the run's outage limit (MAX_OUTAGE, hours) while a receiver is
  // down: it upgrades rather than holding an old build that long; its body is one activity.
  webhookWorkflow: 'AUTO_UPGRADE',
  // One report version, minutes long: it finishes where it started.
  reportRewriteWorkflow: 'PINNED',
} as const satisfies Record<string, VersioningBehavior>;

/** The behaviour, on a versioned worker only: the server refuses a workflow task that states one
 *  from a worker without deployment options (dev, tests, unversioned deploys). Asked when an
 *  execution first runs on a worker; `currentDeploymentVersion` is that worker's version (an
 *  unversioned worker has a build id of its own but no deployment name). */
const onVersionedWorker = (versioningBehavior: VersioningBehavior) => () =>
  workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior } : {};

setWorkflowOptions(onVersionedWorker(VERSIONING_BEHAVIORS.researchWorkflow), researchWorkflow);
setWorkflowOptions(onVersionedWorker(VERSIONING_BEHAVIORS.researcherWorkflow), researcherWorkflow);
setWorkflowOptions(onVersionedWorker(VERSIONING_BEHAVIORS.coderWorkflow), coderWorkflow);
setWorkflowOptions(onVersionedWorker(VERSIONING_BEHAVIORS.ingestDocumentWorkflow), ingestDocumentWorkflow);
setWorkflowOptions(onVersionedWorker(VERSIONING_BEHAVIORS.admissionWorkflow), admissionWorkflow);
setWorkflowOptions(onVersionedWorker(VERSIONING_BEHAVIORS.webhookWorkflow), webhookWorkflow);
setWorkflowOptions(onVersionedWorker(VERSIONING_BEHAVIORS.reportRewriteWorkflow), reportRewriteWorkflow);
