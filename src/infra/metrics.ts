// Prometheus metrics of this process: HTTP, runs, LLM calls (tokens, cost, latency by model and
// role), searches, pages, sandbox runs, Node's own; plus the Temporal SDK's metrics, which its
// core serves on a loopback port of its own and /metrics appends.
import client from 'prom-client';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry, prefix: 'deep_research_' });

const counter = (name: string, help: string, labelNames: string[]) => new client.Counter({ name, help, labelNames, registers: [registry] });
const histogram = (name: string, help: string, labelNames: string[], buckets: number[]) =>
  new client.Histogram({ name, help, labelNames, buckets, registers: [registry] });
const gauge = (name: string, help: string, labelNames: string[]) => new client.Gauge({ name, help, labelNames, registers: [registry] });

export const metrics = {
  httpRequests: counter('deep_research_http_requests_total', 'HTTP requests answered', ['method', 'route', 'status']),
  httpSeconds: histogram('deep_research_http_request_seconds', 'HTTP answer time', ['method', 'route'], [0.005, 0.02, 0.1, 0.5, 2, 10]),
  // /metrics is served without a key: the tenant label is there only when METRICS_TENANT_NAMES says so.
  runsStarted: counter('deep_research_runs_started_total', 'research runs started through the API', ['tenant']),
  runsFinished: counter('deep_research_runs_finished_total', 'research runs that ended', ['status', 'outcome']),
  llmRequests: counter('deep_research_llm_requests_total', 'HTTP requests to the model', ['model', 'role', 'outcome']),
  llmTokens: counter('deep_research_llm_tokens_total', 'tokens the model reported', ['model', 'role', 'kind']),
  llmCost: counter('deep_research_llm_cost_usd_total', 'estimated cost of the model requests (LLM_PRICES)', ['model', 'role']),
  llmSeconds: histogram('deep_research_llm_request_seconds', 'model request time', ['model', 'role'], [0.25, 1, 3, 10, 30, 90, 300]),
  llmProviderLimit: gauge('deep_research_llm_provider_limit', 'model requests a provider may have in flight in this worker (adaptive)', [
    'provider',
  ]),
  llmProviderInFlight: gauge('deep_research_llm_provider_in_flight', 'model requests in flight to a provider from this worker', [
    'provider',
  ]),
  llmProviderWaiting: gauge('deep_research_llm_provider_waiting', 'model requests waiting for a provider slot in this worker', [
    'provider',
  ]),
  llmProviderDecreases: counter('deep_research_llm_provider_limit_decreases_total', 'halvings of a provider limit after a 429', [
    'provider',
  ]),
  llmFailovers: counter('deep_research_llm_failovers_total', 'model requests sent to the fallback provider, by reason', ['reason']),
  searches: counter('deep_research_search_queries_total', 'search queries by provider and outcome', ['provider', 'outcome']),
  pages: counter('deep_research_pages_total', 'pages read, by outcome', ['status']),
  browserPages: counter('deep_research_browser_pages_total', 'pages rendered in the browser, by outcome', ['status']),
  browserBlockedRequests: counter(
    'deep_research_browser_blocked_requests_total',
    "requests of rendered pages refused by the SSRF guard, a ban or the byte cap (the page's own or a sub-resource's)",
    ['reason'],
  ),
  uncaughtErrors: counter(
    'deep_research_uncaught_errors_total',
    'exceptions and promise rejections nothing handled (bugs), logged by the last-resort handlers while the process kept serving',
    ['kind'],
  ),
  sandboxRuns: counter('deep_research_sandbox_runs_total', 'sandbox runs, by outcome', ['status']),
};

let tenantNames = false;

/** METRICS_TENANT_NAMES: label runs started with the tenant (set by the composition root; off by default). */
export function nameTenantsInMetrics(on: boolean): void {
  tenantNames = on;
}

/** Counts a run started, under its tenant's name only when that was asked for: the scrape needs no key. */
export function countRunStarted(tenant: string): void {
  metrics.runsStarted.inc(tenantNames ? { tenant } : {});
}

let sdkMetricsUrl: string | undefined;

/** Where the Temporal SDK's own Prometheus exporter listens in this process (set at runtime install). */
export function setSdkMetricsAddress(bindAddress: string): void {
  sdkMetricsUrl = `http://${bindAddress}/metrics`;
}

/** The text a scrape of /metrics gets: this process's metrics, then the SDK's. */
export async function metricsText(): Promise<string> {
  const own = await registry.metrics();
  if (!sdkMetricsUrl) return own;
  const sdk = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) })
    .then((r) => (r.ok ? r.text() : ''))
    .catch(() => '');
  return sdk ? `${own}\n# Temporal SDK\n${sdk}` : own;
}

export const METRICS_CONTENT_TYPE = registry.contentType;
