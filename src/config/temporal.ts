// Where Temporal is and how to reach it, the task queue, the embedded dev server's ports, and
// Worker Versioning.
import { z } from 'zod';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../shared/constants';
import { Duration } from '../shared/schemas';
import type { TemporalProfile } from '../infra/temporal-connection';
import { area, optionalString, port, trueOrFalse } from './setting-kit';

const temporalSettings = {
  // Where Temporal is and how to reach it: src/infra/temporal-connection.ts decides, through the SDK's
  // environment configuration (a temporal.toml profile with these and the other TEMPORAL_TLS_* and
  // TEMPORAL_GRPC_META_* variables over it, as the Temporal CLI). Here they are only checked.
  TEMPORAL_ADDRESS: optionalString.describe(
    "a running Temporal server (`host:port` of its frontend); unset (and no profile's address), `dev` starts its own and `worker`/`api` use `127.0.0.1:TEMPORAL_PORT`",
  ),
  TEMPORAL_NAMESPACE: optionalString.describe("namespace; unset: the profile's, else `default`"),
  TEMPORAL_PROFILE: optionalString.describe(
    'the profile of the `temporal.toml` to use; unset: `default` (see [Connecting to a Temporal cluster or Temporal Cloud](scaling-and-deploys.md#connecting-to-a-temporal-cluster-or-temporal-cloud))',
  ),
  TEMPORAL_CONFIG_FILE: optionalString.describe(
    "the `temporal.toml` profiles are read from; unset: `~/.config/temporalio/temporal.toml` (the CLI's, when it exists)",
  ),
  TEMPORAL_API_KEY: optionalString.describe('sent as `Authorization: Bearer …`; turns TLS on unless `TEMPORAL_TLS=false`'),
  // The SDK takes anything but "true" or "1" as false: a typo must not turn TLS off.
  TEMPORAL_TLS: optionalString
    .pipe(z.enum(['true', 'false', '1', '0'], { message: 'expected true or false' }).optional())
    .describe(
      "`true` for TLS with the system's CAs; `false` turns it off. The other `TEMPORAL_TLS_*` variables (mTLS, CA, server name) and `TEMPORAL_GRPC_META_*` are read as the Temporal CLI reads them (see [Connecting to a Temporal cluster or Temporal Cloud](scaling-and-deploys.md#connecting-to-a-temporal-cluster-or-temporal-cloud))",
    ),
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: optionalString
    .pipe(
      z
        .enum(['false', '0'], {
          message: 'not supported by the TypeScript SDK; set TEMPORAL_TLS_SERVER_NAME to a name the server certificate has',
        })
        .optional(),
    )
    .describe('`true` is refused: the TypeScript SDK cannot do it; set `TEMPORAL_TLS_SERVER_NAME` to a name the certificate has instead'),
  TEMPORAL_WORKER_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$/, 'letters, digits, "_", "-", "+" and "." (no "/"), at most 100')
    .optional()
    .describe(
      "Worker Versioning: this build's id, e.g. the image tag or git commit; `auto` = a hash of `src/`, `prompts/` and the lockfile; unset, the worker is unversioned",
    ),
  NEW_BUILD_CHECK: optionalString
    .pipe(Duration.optional())
    .describe(
      'Worker Versioning: how often a run waiting for its review looks for a newer target build of its deployment, to continue there; unset: 5 minutes',
    ),
  // Worker Versioning: set a build id and the worker polls as that version of the deployment
  // ('auto': a hash of the code). Unset: an unversioned worker. `dev` names its own build after its
  // workflow code, whatever this says (src/cli/earlier-builds.ts).
  TEMPORAL_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, 'letters, digits, "_" and "-" (Temporal refuses "." and ":" in it), at most 100')
    .default('deep-research')
    .describe(
      "Worker Versioning: the deployment this worker's versions belong to (letters, digits, `_`, `-`; see [Deploying a new version](scaling-and-deploys.md#deploying-a-new-version))",
    ),
  TEMPORAL_TASK_QUEUE: z
    .string()
    .min(1)
    .default(DEFAULT_TASK_QUEUE)
    .describe('task queue of the research workflows (and the prefix of the `<queue>-llm`, `-sandbox` and `-browser` queues)'),
  TEMPORAL_CLI_PATH: optionalString.describe('the `temporal` binary to use'),
  PATH: z
    .string()
    .default('')
    .describe("directories searched for `temporal` when `TEMPORAL_CLI_PATH` is not set (the process's own `PATH`)"),
  TEMPORAL_PORT: port.default(7233).describe('port of the embedded dev server'),
  TEMPORAL_UI_PORT: port.default(8233).describe("port of the embedded dev server's Web UI"),
  TEMPORAL_METRICS_PORT: port
    .optional()
    .describe('port on which the embedded dev server serves its own Prometheus metrics (requests by operation, persistence); unset: none'),
  TEMPORAL_WORKER_PROMOTE: trueOrFalse(false).describe(
    'Worker Versioning, for `deep-research worker` with a build id: `true` makes this build the current version when the worker starts, and moves runs pinned to builds whose workers are gone (no poll in two minutes) to it (as `dev` does, see [dev across a code change](scaling-and-deploys.md#dev-across-a-code-change)); `docker-compose.yml` sets it. `false`: the rollout is yours (`temporal worker deployment set-current-version`)',
  ),
};

export const temporalArea = area(
  'Temporal',
  temporalSettings,
  /** `profile`: the connection as the SDK's environment configuration resolved it. */
  (v, profile: TemporalProfile) => ({
    temporal: {
      /** TEMPORAL_ADDRESS, else the profile's. Unset means "start the embedded dev server" in `dev`,
       *  and localhost:7233 elsewhere. */
      address: profile.address,
      /** TEMPORAL_NAMESPACE, else the profile's, else "default". */
      namespace: profile.namespace ?? DEFAULT_NAMESPACE,
      /** The rest of the connection (TLS, API key, gRPC headers) and where each setting came from. */
      connection: profile,
      taskQueue: v.TEMPORAL_TASK_QUEUE,
      cliPath: v.TEMPORAL_CLI_PATH,
      /** Directories searched for a `temporal` binary (the process PATH). */
      searchPath: v.PATH,
      port: v.TEMPORAL_PORT,
      uiPort: v.TEMPORAL_UI_PORT,
      /** The embedded dev server's own Prometheus metrics port (TEMPORAL_METRICS_PORT); undefined: none. */
      metricsPort: v.TEMPORAL_METRICS_PORT,
      /** Worker Versioning: the deployment and this worker's build id ('auto' = the code's hash);
       *  undefined for an unversioned worker. */
      deployment: v.TEMPORAL_WORKER_BUILD_ID ? { name: v.TEMPORAL_DEPLOYMENT_NAME, buildId: v.TEMPORAL_WORKER_BUILD_ID } : undefined,
      /** TEMPORAL_DEPLOYMENT_NAME, also for `dev`, whose worker is always a version of it. */
      deploymentName: v.TEMPORAL_DEPLOYMENT_NAME,
      /** TEMPORAL_WORKER_PROMOTE: a versioned worker makes its build current and takes over runs of gone builds. */
      promote: v.TEMPORAL_WORKER_PROMOTE,
    },
  }),
);
