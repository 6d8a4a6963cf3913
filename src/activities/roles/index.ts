// Every role, one entry each: the module that holds its prompt (prompts/<file>.md, with its
// variables and answer schema), the parts of prompt files it sends on its own, and its activities.
// The worker registers the activities of all roles, with the phases' (src/activities/phases/,
// activities that chain several roles' calls), as the model-call group (src/activities/index.ts),
// and the workflows call them by name through that group's proxy, `calls.llm.<name>`
// (src/workflows/proxies.ts). docs/roles.md has the table; a new role is a module and a line here.
import { MODEL_CALL_PARTS } from '../llm/model-call';
import type { AnyPart } from '../llm/prompt-def';
import { background } from './background';
import { citationCheck } from './citation-check';
import { changes } from './changes';
import { coder } from './coder';
import { coderResults } from './coder-results';
import { compressor } from './compressor';
import { coordinator } from './coordinator';
import { extractor } from './extractor';
import { gapReflection } from './gap-reflection';
import { judge } from './judge';
import { knowledgeRouter } from './knowledge-router';
import { planner } from './planner';
import { reportOutline } from './report-outline';
import { reportSection } from './report-section';
import { reporter } from './reporter';
import { researcher } from './researcher';
import { rewrite } from './rewrite';
import { searchTopic } from './search-topic';
import { supervisor } from './supervisor';
import { userMemory } from './user-memory';
import type { RoleDeps } from '../role-kit/role';

/** The roles, in the order a run meets them. */
export const ROLES = {
  coordinator,
  rewrite,
  background,
  knowledgeRouter,
  planner,
  researcher,
  searchTopic,
  extractor,
  compressor,
  coder,
  coderResults,
  judge,
  gapReflection,
  supervisor,
  reporter,
  reportOutline,
  reportSection,
  citationCheck,
  changes,
  userMemory,
};
export type RoleName = keyof typeof ROLES;

/** The members of every role's `K` (activities' result, prompts) in one type. */
type Merged<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** Every role's own activities (the phases' are src/activities/phases/index.ts). */
export function createRoleActivities(deps: RoleDeps) {
  return Object.assign({}, ...Object.values(ROLES).map((r) => r.activities(deps))) as Merged<
    ReturnType<(typeof ROLES)[RoleName]['activities']>
  >;
}

/** Every prompt by name (PROMPTS.judge, PROMPTS.extractor, …). */
export const PROMPTS = Object.assign({}, ...Object.values(ROLES).map((r) => r.prompts)) as Merged<(typeof ROLES)[RoleName]['prompts']>;
export type PromptName = keyof typeof PROMPTS;

/** Every part of a prompt file that code sends on its own: the roles' and every model call's. */
export const PARTS: AnyPart[] = [...Object.values(ROLES).flatMap((r) => r.parts as AnyPart[]), ...MODEL_CALL_PARTS];
