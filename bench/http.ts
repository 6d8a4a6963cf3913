// The model client's HTTP path: CPU per chat completion of this process with the built-in fetch and
// with leanFetch (src/infra/http.ts), through the OpenAI client as the worker makes them, against
// an OpenAI-shaped server in a process of its own (so its CPU is not counted). Alternating rounds,
// one run; prints each round and the ratio of the medians.
//   node bin/run-ts.mjs bench/http.ts [--calls 2000] [--rounds 5] [--kb 4]
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { leanFetch } from '../src/infra/http';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '5' }, kb: { type: 'string', default: '4' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

// The answer: one assistant message of about --kb KB, as a model's reply with usage.
const SERVER = `
const http = require('node:http');
const answer = JSON.stringify({ id: 'c1', object: 'chat.completion', created: 0, model: 'm',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'word '.repeat(${Number(values.kb)} * 200) } }],
  usage: { prompt_tokens: 900, completion_tokens: 300, total_tokens: 1200 } });
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(answer); }); });
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
`;
const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve) => server.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));

const messages = [{ role: 'user' as const, content: 'question '.repeat(500) }];
const clients = {
  builtin: new OpenAI({ apiKey: 'k', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 }),
  lean: new OpenAI({ apiKey: 'k', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, fetch: leanFetch }),
};

async function cpuPerCall(client: OpenAI): Promise<number> {
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) await client.chat.completions.create({ model: 'm', messages });
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / calls;
}

for (const c of Object.values(clients)) await cpuPerCall(c); // warm-up
const results: Record<keyof typeof clients, number[]> = { builtin: [], lean: [] };
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? (['lean', 'builtin'] as const) : (['builtin', 'lean'] as const);
  for (const name of order) results[name].push(await cpuPerCall(clients[name]));
  console.log(
    `round ${r + 1}: built-in fetch ${results.builtin.at(-1)!.toFixed(0)} µs, leanFetch ${results.lean.at(-1)!.toFixed(0)} µs CPU per call`,
  );
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `median CPU per call: built-in fetch ${median(results.builtin).toFixed(0)} µs, leanFetch ${median(results.lean).toFixed(0)} µs, ratio ${(median(results.lean) / median(results.builtin)).toFixed(2)}`,
);
server.kill();
