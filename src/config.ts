// The one place that reads process.env. Everything else receives a typed Config, whose type is what
// the areas read (src/config/<area>.ts): each variable is declared once, with its schema and its
// description, in its area or its search provider (src/infra/search/<provider>.ts).
import { z } from 'zod';
import { loadTemporalProfile } from './infra/temporal-connection';
import type { StartSettings } from './infra/process-start';
import { invalidConfiguration, type Settings } from './config/setting-kit';
import { llmArea } from './config/llm';
import { providerSettings, searchArea } from './config/search';
import { crawlArea } from './config/crawl';
import { browserArea } from './config/browser';
import { sandboxArea } from './config/sandbox';
import { knowledgeArea } from './config/knowledge';
import { temporalArea } from './config/temporal';
import { storageArea } from './config/storage';
import { apiArea } from './config/api';
import { observabilityArea } from './config/observability';
import { workersArea } from './config/workers';

/** The areas in the order docs/configuration.md lists them; the search providers' own variables
 *  follow the search area's. */
export const AREAS = [
  llmArea,
  { title: searchArea.title, settings: { ...searchArea.settings, ...providerSettings } },
  crawlArea,
  browserArea,
  sandboxArea,
  knowledgeArea,
  temporalArea,
  storageArea,
  apiArea,
  observabilityArea,
  workersArea,
] as const;

// Keys are the environment variable names, so an error message can name the variable as-is.
export const EnvSchema = z.object({
  ...llmArea.settings,
  ...searchArea.settings,
  ...crawlArea.settings,
  ...browserArea.settings,
  ...sandboxArea.settings,
  ...knowledgeArea.settings,
  ...temporalArea.settings,
  ...storageArea.settings,
  ...apiArea.settings,
  ...observabilityArea.settings,
  ...workersArea.settings,
});
const ProviderSchema = z.object(providerSettings);

/** The environment as the schema parsed it: the variables' values, defaults filled in. */
type Env = Settings<typeof EnvSchema.shape>;

export type Config = ReturnType<typeof loadConfig>;
export type TenantQuotas = Config['api']['quotas'];
export type Fairness = Config['api']['fairness'];

/** True when some OpenAI-compatible endpoint is configured. */
export function llmConfigured(config: Pick<Config, 'llm'>): boolean {
  return config.llm.apiKey !== undefined || config.llm.baseUrl !== undefined;
}

/** ALLOCATOR and MAIN_SEMI_SPACE_MB alone, for the launcher, which settles them before the program
 *  is loaded; undefined when either is invalid (loadConfig then reports it). */
export function startSettings(env: NodeJS.ProcessEnv = process.env): StartSettings | undefined {
  const allocator = workersArea.settings.ALLOCATOR.safeParse(env.ALLOCATOR);
  const semi = workersArea.settings.MAIN_SEMI_SPACE_MB.safeParse(env.MAIN_SEMI_SPACE_MB);
  return allocator.success && semi.success ? { allocator: allocator.data, mainSemiSpaceMb: semi.data } : undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const { e, providers } = parseEnv(env);
  const { temporal } = temporalArea.read(e, loadTemporalProfile(env));
  const { llm } = llmArea.read(e);
  return {
    ...observabilityArea.read(e),
    ...storageArea.read(e),
    temporal,
    ...apiArea.read(e),
    llm,
    ...searchArea.read(e, providers),
    ...crawlArea.read(e),
    ...sandboxArea.read(e),
    ...browserArea.read(e, temporal.searchPath),
    ...knowledgeArea.read(e, llm),
    ...workersArea.read(e, llm.timeoutMs, { browserWait: e.BROWSER_WAIT, newBuildCheck: e.NEW_BUILD_CHECK }),
  };
}

function parseEnv(env: NodeJS.ProcessEnv): { e: Env; providers: Record<string, unknown> } {
  const parsed = EnvSchema.safeParse(env);
  const providers = ProviderSchema.safeParse(env);
  if (parsed.success && providers.success) return { e: parsed.data, providers: providers.data };
  const issues = [...(parsed.error?.issues ?? []), ...(providers.error?.issues ?? [])];
  throw invalidConfiguration(issues.map((i) => ({ variable: String(i.path[0] ?? '(environment)'), reason: i.message })));
}
