// Report versions: a finished run's report rewritten from the same findings and sources (another
// length, language, audience, instructions or model), by a workflow of its own. Version 1 is the
// run's own report; rewrites are 2, 3, …
import { z } from 'zod';
import type { MemoryOwner } from './memory';
import { Duration, Locale, ReportLength, RetrySettings, Usage } from './schemas';

/** Characters of the audience and of the instructions a rewrite may give. */
export const MAX_AUDIENCE_CHARS = 300;
export const MAX_INSTRUCTIONS_CHARS = 2_000;

const REWRITE_FIELDS = ['reportLength', 'locale', 'audience', 'instructions', 'model'] as const;

/** What a rewrite asks for: at least one change. */
export const RewriteOptions = z
  .object({
    reportLength: ReportLength.optional().describe(
      "brief, standard or long (written section by section); unset: the run's own report's length",
    ),
    locale: Locale.optional().describe("the report's language as a BCP 47 tag; unset: the run's"),
    audience: z
      .string()
      .trim()
      .min(1)
      .max(MAX_AUDIENCE_CHARS)
      .optional()
      .describe('for whom the report is written, e.g. "city council members without a technical background"'),
    instructions: z.string().max(MAX_INSTRUCTIONS_CHARS).trim().min(1).optional().describe('what else to change, in your words'),
    model: z
      .string()
      .trim()
      .regex(/^[\x21-\x7e]{1,200}$/, 'model must be a model name')
      .optional()
      .describe(
        "the model that writes this version: one the server allows (the roles' and fallback's models, LLM_REQUEST_MODELS, the provider's list)",
      ),
  })
  .strict()
  .refine((o) => REWRITE_FIELDS.some((f) => o[f] !== undefined), {
    message: `ask for at least one change: ${REWRITE_FIELDS.join(', ')}`,
  });
export type RewriteOptions = z.infer<typeof RewriteOptions>;

export const VersionStatus = z.enum(['writing', 'ready', 'failed']);
export type VersionStatus = z.infer<typeof VersionStatus>;

/** The rewrite workflow's input: ids, the options, and the operator's outage limit and retries. */
export interface RewriteInput {
  researchId: string;
  tenant: string;
  version: number;
  options: RewriteOptions;
  /** Whose memory the writing prompts read: the caller's, when memory is on for them. */
  memoryOf?: MemoryOwner | undefined;
  maxOutage?: Duration | undefined;
  retry?: RetrySettings | undefined;
}

export interface RewriteResult {
  version: number;
  status: 'ready' | 'failed';
  title?: string;
  usage: Usage;
  error?: string;
}

/** The rewrite workflow of version `version` of a run's report: one id per version. */
export function rewriteWorkflowId(researchId: string, version: number): string {
  return `${researchId}/report-v${version}`;
}
