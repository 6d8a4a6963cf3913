// The Temporal server's counters read by bench/load.ts --temporal-metrics.
import { describe, expect, it } from 'vitest';
import { parseCounters, perRunLines } from '../../bench/support/temporal-metrics';

const before = `# HELP service_requests
service_requests{namespace="default",operation="PollActivityTaskQueue",service_name="frontend"} 10
service_requests{namespace="default",operation="PollActivityTaskQueue",service_name="matching"} 4
persistence_requests{operation="UpdateWorkflowExecution",service_name="history"} 100
persistence_latency_sum{operation="UpdateWorkflowExecution",service_name="history"} 0.5
persistence_latency_bucket{operation="UpdateWorkflowExecution",le="0.001"} 3
`;
const after = before
  .replace('service_name="frontend"} 10', 'service_name="frontend"} 50')
  .replace(
    'persistence_requests{operation="UpdateWorkflowExecution",service_name="history"} 100',
    'persistence_requests{operation="UpdateWorkflowExecution",service_name="history"} 300',
  )
  .replace('0.5', '1.5');

describe('the Temporal server counters', () => {
  it('reads counters by service and operation, and nothing else', () => {
    const c = parseCounters(before);
    expect(c.get('service_requests frontend/PollActivityTaskQueue')).toBe(10);
    expect(c.get('service_requests matching/PollActivityTaskQueue')).toBe(4);
    expect(c.get('persistence_requests history/UpdateWorkflowExecution')).toBe(100);
    expect([...c.keys()].some((k) => k.startsWith('persistence_latency_bucket'))).toBe(false);
  });

  it('reports what grew per run, with the persistence time', () => {
    const [requests, persistence] = perRunLines(parseCounters(before), parseCounters(after), 10);
    expect(requests).toContain('frontend/PollActivityTaskQueue 4.0');
    expect(requests).not.toContain('matching/PollActivityTaskQueue');
    expect(persistence).toContain('20 calls, 100 ms');
    expect(persistence).toContain('history/UpdateWorkflowExecution 20.0 (100.0 ms)');
  });
});
