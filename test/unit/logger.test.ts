// One log format for the process (text, or JSON lines), the Temporal SDK's lines through it, its
// expected start notices left out, secrets masked in both formats.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, logLine, sdkLogger } from '../../src/infra/logger';

const at = new Date('2026-12-01T05:00:00.000Z');

describe('log lines', () => {
  it('writes text or JSON lines, masking secrets in both', () => {
    expect(logLine('text', 'warn', 'slow call', { role: 'judge', apiKey: 'sk-secret' }, at)).toBe(
      '2026-12-01T05:00:00.000Z WARN  slow call {"role":"judge","apiKey":"***"}\n',
    );
    const json = JSON.parse(logLine('json', 'info', 'worker polling', { taskQueue: 'q', authorization: 'Bearer x' }, at)) as Record<
      string,
      unknown
    >;
    expect(json).toEqual({ time: '2026-12-01T05:00:00.000Z', level: 'info', msg: 'worker polling', taskQueue: 'q', authorization: '***' });
  });
});

describe("the SDK's logger", () => {
  const written: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    written.length = 0;
  });
  const capture = () =>
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });

  it('writes its warnings in the process format and leaves out its expected notices and its info lines', () => {
    capture();
    const sdk = sdkLogger(createLogger('info', {}, 'json'), 'info');
    sdk.warn('No workflows registered, not polling for workflow tasks', { taskQueue: 'q-llm' });
    sdk.info('No Nexus services registered, not polling for Nexus tasks');
    sdk.log('WARN', 'No activities registered, not polling for activity tasks');
    sdk.info('Worker state changed', { state: 'RUNNING' });
    sdk.warn('Activity failed', { attempt: 3 });
    sdk.log('ERROR', 'Workflow failed');
    expect(written.map((l) => JSON.parse(l) as { level: string; msg: string }).map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'Activity failed'],
      ['error', 'Workflow failed'],
    ]);
  });

  it('shows everything but the expected notices with LOG_LEVEL=debug', () => {
    capture();
    const sdk = sdkLogger(createLogger('debug'), 'debug');
    sdk.trace('poll');
    sdk.info('Worker state changed');
    sdk.info('No Nexus services registered, not polling for Nexus tasks');
    expect(written.map((l) => l.replace(/^\S+ /, ''))).toEqual(['DEBUG poll\n', 'INFO  Worker state changed\n']);
  });
});
