// Every prompt by name, for code outside the roles (the crawl asks PROMPTS.extractor): the prompts
// are declared in their role modules and listed in src/activities/roles/index.ts; how a prompt is
// declared is src/activities/llm/prompt-def.ts.
export { PROMPTS, type PromptName } from '../roles';
export type { AnyPrompt, PromptDef, PromptOutput, PromptVars, StructuredPrompt } from './prompt-def';
