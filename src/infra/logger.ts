// A small leveled logger writing one line per event to stderr: readable text, or JSON lines
// (LOG_FORMAT=json) for a log collector. Values under keys that look like secrets are masked, so a
// config dump or an error with headers cannot leak a key into logs. The Temporal SDK's own lines
// come through it too (sdkLogger), in the same format.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_KEY = /(api[-_]?key|authorization|password|secret|token)$/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) && v ? '***' : redact(v, depth + 1)]));
}

/** One event as a line: `time LEVEL message {fields}`, or a JSON object with time, level, msg and the fields. */
export function logLine(format: LogFormat, lvl: LogLevel, msg: string, fields: Record<string, unknown>, at = new Date()): string {
  const safe = redact(fields) as Record<string, unknown>;
  if (format === 'json') return `${JSON.stringify({ time: at.toISOString(), level: lvl, msg, ...safe })}\n`;
  const tail = Object.keys(safe).length ? ` ${JSON.stringify(safe)}` : '';
  return `${at.toISOString()} ${lvl.toUpperCase().padEnd(5)} ${msg}${tail}\n`;
}

export function createLogger(level: LogLevel = 'info', bindings: Record<string, unknown> = {}, format: LogFormat = 'text'): Logger {
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    process.stderr.write(logLine(format, lvl, msg, { ...bindings, ...fields }));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (b) => createLogger(level, { ...bindings, ...b }, format),
  };
}

/** Lines the SDK writes at every start of a worker that polls only some kinds of task (the
 *  activity-only queues): expected, so not shown. */
const EXPECTED_SDK_NOTICES = [
  /^No workflows registered, not polling for workflow tasks/,
  /^No activities registered, not polling for activity tasks/,
  /^No Nexus services registered, not polling for Nexus tasks/,
];

type SdkLevel = 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
const SDK_LEVEL: Record<SdkLevel, LogLevel> = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

/** The Temporal SDK's logger, writing through `log` (one format for the process): its warnings
 *  and errors, everything with LOG_LEVEL=debug, never its expected start notices. */
export function sdkLogger(log: Logger, level: LogLevel) {
  const floor = level === 'debug' ? ORDER.debug : ORDER.warn;
  const emit = (sdk: SdkLevel, message: string, meta?: Record<string, unknown>) => {
    const lvl = SDK_LEVEL[sdk];
    if (ORDER[lvl] < floor || EXPECTED_SDK_NOTICES.some((r) => r.test(message))) return;
    log[lvl](message, meta);
  };
  return {
    log: (sdk: SdkLevel, message: string, meta?: Record<string, unknown>) => emit(sdk, message, meta),
    trace: (message: string, meta?: Record<string, unknown>) => emit('TRACE', message, meta),
    debug: (message: string, meta?: Record<string, unknown>) => emit('DEBUG', message, meta),
    info: (message: string, meta?: Record<string, unknown>) => emit('INFO', message, meta),
    warn: (message: string, meta?: Record<string, unknown>) => emit('WARN', message, meta),
    error: (message: string, meta?: Record<string, unknown>) => emit('ERROR', message, meta),
  };
}
