// What a role is: one module under src/activities/roles/ with its prompt (prompts/<file>.md,
// declared with its variables and the zod schema of its answer), the parts of prompt files it
// sends on its own, and its activities. src/activities/roles/index.ts lists every role; the worker
// registers their activities by name, and the workflows call them as `calls.llm.<name>`
// (src/workflows/proxies.ts). docs/roles.md walks through one.
import type { AnyPart, AnyPrompt } from '../llm/prompt-def';
import type { Llm } from '../llm/call';
import type { McpDiscovery } from '../mcp';
import type { Store } from '../store';
import type { TokenCounter } from '../llm/tokens';
import type { PythonToolSpec } from './researcher-tools';
import type { CrawlResult } from '../crawl';
import type { KnowledgeSearchInput, KnowledgeSearchResult } from '../knowledge/search';
import type { WebSearchInput, WebSearchResult } from '../search';

/** What a researcher's conversation and each tool result may hold, and how tokens are counted. */
export interface ResearcherBudgets {
  /** Tokens of conversation a turn sends before old tool results are trimmed, then it must answer. */
  conversationTokens: number;
  /** Tokens one tool result may hold, shared among its pages and hits. */
  toolResultTokens: number;
  counter: TokenCounter;
}

/** The python tool, where the worker has it: its limits, and whether a sandbox can run it now. */
export interface PythonTool {
  spec: PythonToolSpec;
  usable: () => Promise<boolean>;
}

/** The activities whose work the background phase and a researcher's turn do in-process (the worker's own, src/activities/index.ts). */
export interface BackgroundWeb {
  webSearch: (input: WebSearchInput) => Promise<WebSearchResult>;
  crawlPage: (input: { researchId: string; url: string; goal: string }) => Promise<CrawlResult>;
  knowledgeSearch: (input: KnowledgeSearchInput) => Promise<KnowledgeSearchResult>;
}

/** Everything a role's activities may need; the worker makes it once (src/activities/index.ts). */
export interface RoleDeps {
  llm: Llm;
  store: Store;
  /**
   * Whether processing (coder) steps can run: whether a sandbox is there for them. See
   * src/activities/index.ts for how the worker answers it.
   */
  canRunCode: () => Promise<boolean>;
  /** The researcher's budgets, in tokens of its model's tokenizer family. */
  budgets: ResearcherBudgets;
  /** The researcher's python tool; absent when it is switched off. */
  python?: PythonTool | undefined;
  /** The MCP servers' tools for a role (none when no server is configured). */
  discoverMcp?: ((input: { role: string }) => Promise<McpDiscovery>) | undefined;
  /** The sandbox's limits, which the coder's prompt states. */
  sandbox: { timeoutSeconds: number; memoryMb: number };
  /** The web search, page read and knowledge search, which the background phase
   *  (researchBackground) and a researcher's turn (its web_search and crawl calls) run in-process;
   *  absent in tests of other roles (a turn then runs no web tools). */
  web?: BackgroundWeb | undefined;
}

export interface Role<P extends Record<string, AnyPrompt>, A, D> {
  /** What the role does, in one line (docs/roles.md). */
  does: string;
  /** Its prompts by name (PROMPTS.<name>), each naming its file in prompts/ and its answer's schema. */
  prompts: P;
  /** Parts of prompt files its code sends on their own (repair requests, tool descriptions). */
  parts: AnyPart[];
  /** Its activities, registered with the worker under these names (a recorded history names them:
   *  never rename one). Workflows call them as `calls.llm.<name>`. */
  activities: (deps: D) => A;
  /** The activity, of another group or another role, that asks this role's model, when that is
   *  where the role is answered (the extractor reads a page inside the crawl, the judge checks a
   *  step in its last turn). */
  answeredIn?: { activity: string; module: string };
}

/** Declares a role; its activities take any part of RoleDeps. */
export function defineRole<P extends Record<string, AnyPrompt>, A extends object, D = RoleDeps>(role: Role<P, A, D>): Role<P, A, D> {
  return role;
}
