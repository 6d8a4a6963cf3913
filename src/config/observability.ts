// What the processes say about themselves: logs, Prometheus metrics, OpenTelemetry traces.
import { z } from 'zod';
import { area, int, optionalString, trueOrFalse } from './setting-kit';

const observabilitySettings = {
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info').describe('`debug`, `info`, `warn`, `error`'),
  LOG_FORMAT: z
    .enum(['text', 'json'])
    .default('text')
    .describe(
      '`text`: one readable line per event; `json`: one JSON object per line (time, level, msg and the fields), for a log collector',
    ),
  /** A worker's /metrics port (0: any free port, printed at start). */
  METRICS_PORT: int(0, 65_535)
    .default(9464)
    .describe(
      "port `deep-research worker` serves `/metrics` on (`0`: any free port, printed at start); the API and `dev` serve it on the API's port",
    ),
  METRICS_HOST: z.string().default('127.0.0.1').describe('address `deep-research worker` serves `/metrics` on'),
  METRICS_TENANT_NAMES: trueOrFalse(false).describe(
    "`true`: `/metrics` (served without a key) labels runs started with the tenant's name; `false`: one count for all tenants",
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.describe(
    "OpenTelemetry tracing over OTLP/HTTP (unset: off): one trace follows a run from the API's HTTP request through the workflow and its step children to every activity (the Temporal SDK's OpenTelemetry plugin); the exporter's other `OTEL_*` variables (headers, protocol) apply",
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString.describe('the traces endpoint, instead of `OTEL_EXPORTER_OTLP_ENDPOINT`'),
  OTEL_TRACES_EXPORTER: optionalString.describe('`none` turns tracing off'),
  OTEL_SDK_DISABLED: optionalString.describe('`true` turns tracing off'),
  OTEL_SERVICE_NAME: z.string().default('deep-research').describe('the service name of the traces'),
  NODE_ENV: z
    .enum(['development', 'production', 'test'])
    .default('development')
    .describe('the kind of environment the process runs in: `development`, `production` or `test`'),
};

export const observabilityArea = area('Logs, metrics and tracing', observabilitySettings, (v) => ({
  env: v.NODE_ENV,
  logLevel: v.LOG_LEVEL,
  logFormat: v.LOG_FORMAT,
  /** Where a standalone worker serves /metrics. */
  metrics: { host: v.METRICS_HOST, port: v.METRICS_PORT, tenantNames: v.METRICS_TENANT_NAMES },
  /** OpenTelemetry tracing (src/infra/tracing.ts). */
  tracing: {
    enabled:
      Boolean(v.OTEL_EXPORTER_OTLP_ENDPOINT || v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) &&
      v.OTEL_TRACES_EXPORTER !== 'none' &&
      v.OTEL_SDK_DISABLED !== 'true',
    serviceName: v.OTEL_SERVICE_NAME,
  },
}));
