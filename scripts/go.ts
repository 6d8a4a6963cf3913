// `go` for the tools built from the Go module proxy into .tools/ (the Temporal server, Toxiproxy):
// with the installed toolchain only, its output kept for the error when the build fails.
import { spawn } from 'node:child_process';

/** Runs `go args…` and resolves with its output; `tool` names what is being built, for the error. */
export function go(tool: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, { env: { ...process.env, GOTOOLCHAIN: 'local', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => out.push(b));
    child.once('error', (err) => reject(new Error(`go: ${err.message} (${tool} is built with Go from the module proxy)`)));
    child.once('close', (code) => {
      const text = Buffer.concat(out).toString('utf8');
      if (code === 0) resolve(text);
      else reject(new Error(`go ${args.join(' ')} failed (exit ${code}):\n${text.split('\n').slice(-30).join('\n')}`));
    });
  });
}
