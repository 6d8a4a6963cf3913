// The Node version package.json supports (`engines`), checked before anything else loads: an older
// Node may start and fail later in ways that do not name it. Plain JavaScript, so it runs anywhere.
import { readFileSync } from 'node:fs';

/** The minimum package.json asks for (`>=24.11.0` → `24.11.0`). */
export const wantedNode = () =>
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node.replace(/^>=\s*/, '');

/** The one-line reason and remedy when `version` is older than `wanted`; undefined when it will do. */
export function nodeProblem(version, wanted = wantedNode()) {
  const [have, need] = [version, wanted].map((v) => v.split('.').map(Number));
  const i = need.findIndex((n, k) => (have[k] ?? 0) !== n);
  if (i < 0 || (have[i] ?? 0) > need[i]) return undefined;
  return `deep-research: Node ${version} is older than the ${wanted} it needs: install Node ${need[0]} (\`nvm install ${need[0]}\`, or the version in .node-version) and run it again.`;
}
