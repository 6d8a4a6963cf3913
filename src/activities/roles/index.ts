// Every role, one entry each: the module that holds its prompt (prompts/<file>.md, with its
// variables and answer schema), the parts of prompt files it sends on its own, and its activities.
// The worker registers the activities of all roles as the model-call group (src/activities/
// index.ts), and the workflows call them by name through that group's proxy, `calls.llm.<name>`
// (src/workflows/proxies.ts). docs/roles.md has the table; a new role is a module and a line here.
import { MODEL_CALL_PARTS } from '../llm/model-call';
import type { AnyPart, AnyPrompt } from '../llm/prompt-def';
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
import type { RoleDeps } from './role';

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

/** Every role's activities: the worker's model-call group. */
export function createRoleActivities(deps: RoleDeps) {
  return {
    ...coordinator.activities(deps),
    ...background.activities(deps),
    ...knowledgeRouter.activities(deps),
    ...planner.activities(deps),
    ...researcher.activities(deps),
    ...coder.activities(deps),
    ...coderResults.activities(deps),
    ...gapReflection.activities(deps),
    ...supervisor.activities(deps),
    ...reporter.activities(deps),
    ...reportOutline.activities(deps),
    ...reportSection.activities(deps),
    ...citationCheck.activities(deps),
    ...changes.activities(deps),
    ...userMemory.activities(deps),
  };
}

/** Every prompt by name (PROMPTS.judge, PROMPTS.extractor, …). */
export const PROMPTS = {
  ...coordinator.prompts,
  ...rewrite.prompts,
  ...background.prompts,
  ...knowledgeRouter.prompts,
  ...planner.prompts,
  ...researcher.prompts,
  ...searchTopic.prompts,
  ...extractor.prompts,
  ...compressor.prompts,
  ...coder.prompts,
  ...coderResults.prompts,
  ...judge.prompts,
  ...gapReflection.prompts,
  ...supervisor.prompts,
  ...reporter.prompts,
  ...reportOutline.prompts,
  ...reportSection.prompts,
  ...citationCheck.prompts,
  ...changes.prompts,
  ...userMemory.prompts,
} satisfies Record<string, AnyPrompt>;
export type PromptName = keyof typeof PROMPTS;

/** Every part of a prompt file that code sends on its own: the roles' and every model call's. */
export const PARTS: AnyPart[] = [...Object.values(ROLES).flatMap((r) => r.parts as AnyPart[]), ...MODEL_CALL_PARTS];
