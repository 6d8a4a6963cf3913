// OpenTelemetry tracing, switched on by the standard OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTEL_SERVICE_NAME; the exporter reads its own headers and
// protocol settings). Spans go out over OTLP/HTTP. The Temporal SDK's OpenTelemetry plugin carries
// the trace from the API's HTTP span into the workflow, its children and every activity.
// The SDKs are loaded only when tracing is on (they hold about 14 MB).
import type { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import type { Config } from '../config';
import { lazyRequire } from './lazy';

const otel = {
  plugin: lazyRequire<typeof import('@temporalio/interceptors-opentelemetry')>('@temporalio/interceptors-opentelemetry'),
  exporter: lazyRequire<typeof import('@opentelemetry/exporter-trace-otlp-http')>('@opentelemetry/exporter-trace-otlp-http'),
  resources: lazyRequire<typeof import('@opentelemetry/resources')>('@opentelemetry/resources'),
  base: lazyRequire<typeof import('@opentelemetry/sdk-trace-base')>('@opentelemetry/sdk-trace-base'),
  node: lazyRequire<typeof import('@opentelemetry/sdk-trace-node')>('@opentelemetry/sdk-trace-node'),
};

export interface Tracing {
  /** For the Temporal client, the workers and the workflow bundle. */
  plugin: OpenTelemetryPlugin;
  /** Sends what is still buffered. */
  shutdown(): Promise<void>;
}

let installed: Tracing | undefined;

/** Installs tracing once per process when the configuration asks for it; undefined otherwise. */
export function startTracing(config: Pick<Config, 'tracing'>): Tracing | undefined {
  if (!config.tracing.enabled) return undefined;
  if (installed) return installed;
  const resource = new (otel.resources().Resource)({ 'service.name': config.tracing.serviceName });
  const spanProcessor = new (otel.base().BatchSpanProcessor)(new (otel.exporter().OTLPTraceExporter)(), { scheduledDelayMillis: 1_000 });
  const provider = new (otel.node().NodeTracerProvider)({ resource, spanProcessors: [spanProcessor] });
  // The global tracer, W3C trace-context propagation and an AsyncLocalStorage context manager.
  provider.register();
  installed = {
    plugin: new (otel.plugin().OpenTelemetryPlugin)({ resource, spanProcessor }),
    shutdown: () => provider.shutdown(),
  };
  return installed;
}
