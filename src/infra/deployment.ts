// What a versioned worker says at start about its worker deployment: whether it is the version new
// runs go to, and if not, the command that makes it so (docs/scaling-and-deploys.md, "Deploying a new version").
import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';

export interface DeploymentRouting {
  current: string | undefined;
  ramping: { buildId: string; percentage: number } | undefined;
}

/** The deployment's routing: its current and ramping build ids; undefined when the server has no
 *  such deployment yet (no versioned worker of it has polled). */
export async function deploymentRouting(client: Client, namespace: string, deploymentName: string): Promise<DeploymentRouting | undefined> {
  try {
    const res = await client.workflowService.describeWorkerDeployment({ namespace, deploymentName });
    const routing = res.workerDeploymentInfo?.routingConfig;
    const ramping = routing?.rampingDeploymentVersion?.buildId;
    return {
      current: routing?.currentDeploymentVersion?.buildId ?? undefined,
      ramping: ramping ? { buildId: ramping, percentage: routing?.rampingVersionPercentage ?? 0 } : undefined,
    };
  } catch (err) {
    // gRPC status 5: NOT_FOUND.
    if (isGrpcServiceError(err) && err.code === 5) return undefined;
    throw err;
  }
}

/** One line for the worker's log: where new runs go, and what to run if not to this version. */
export function describeRouting(version: WorkerDeploymentVersion, routing: DeploymentRouting | undefined): { ok: boolean; line: string } {
  const me = `deployment ${version.deploymentName}, build ${version.buildId}`;
  if (routing?.current === version.buildId) return { ok: true, line: `${me}: the current version (new runs start here)` };
  const promote = `temporal worker deployment set-current-version --deployment-name ${version.deploymentName} --build-id ${version.buildId}`;
  const where = routing?.current
    ? `new runs still start on build ${routing.current}${routing.ramping ? ` (${routing.ramping.percentage}% on ${routing.ramping.buildId})` : ''}`
    : 'the deployment has no current version yet, so no versioned worker gets new runs';
  return { ok: false, line: `${me}: not current; ${where}. When this version should take new runs: ${promote}` };
}
