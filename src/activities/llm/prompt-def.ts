// How a prompt is declared: the file in prompts/ that holds its text, the role whose model answers
// it, its variables (a zod schema: a missing or misspelt variable is an error), which variables hold
// untrusted text and the label of the block that wraps them, and the schema of the answer with a
// name of its own (the `response_format` name, so logs and test doubles can tell the prompts apart).
// A part is a named piece of a prompt file that code sends on its own (a repair request, a tool's
// description): declared the same way, without a role or an answer. Every role module declares its
// prompts and parts with these helpers; src/activities/roles/index.ts lists them all.
import { z } from 'zod';
import type { LlmRole } from '../../shared/constants';

/** A variable's value: text, a count, or a flag that turns a `{{#name}}…{{/name}}` section on. */
export type VarSchema = z.ZodString | z.ZodNumber | z.ZodBoolean;
export type VarShape = Record<string, VarSchema>;
export type VarValue = string | number | boolean;

export interface PromptDef<S extends VarShape = VarShape, O extends z.ZodType = z.ZodType> {
  /** prompts/<file>.md */
  file: string;
  role: LlmRole;
  vars: z.ZodObject<S>;
  /** Variables holding outside text (user, web, model output), by the label of their block. */
  untrusted: { [K in keyof S]?: string };
  /** The variables its system part may name (see PromptSpec); none when absent. */
  settings?: readonly (keyof S & string)[];
  /** The answer's schema and its name; absent for the tool-calling researcher turn. */
  output?: { name: string; schema: O };
  /** An output limit below the role's (see PromptSpec). */
  maxTokens?: number;
}

/** Any registered prompt, whatever its variables and answer. */
export interface AnyPrompt {
  file: string;
  role: LlmRole;
  vars: z.ZodType<Record<string, VarValue>>;
  untrusted: Partial<Record<string, string>>;
  settings?: readonly string[];
  output?: { name: string; schema: z.ZodType };
  maxTokens?: number;
}
export type StructuredPrompt = AnyPrompt & { output: { name: string; schema: z.ZodType } };
export type PromptVars<P extends { vars: z.ZodType }> = z.input<P['vars']>;
export type PromptOutput<P extends AnyPrompt> = P extends { output: { schema: infer O extends z.ZodType } } ? z.output<O> : never;

interface PromptSpec<S extends VarShape> {
  file: string;
  role: LlmRole;
  vars: S;
  untrusted: { [K in keyof S]?: string };
  /**
   * The variables its system part may name: those the same on every call of the prompt in a run
   * (the run's locale, a deployment's limits, flags for the run's options). Per-call text goes in
   * the user part, after the stable instructions, so a provider's prefix cache reuses the whole
   * system part from one call to the next (a test holds every prompt file to this).
   */
  settings?: readonly (keyof S & string)[];
  /** An output limit below the role's, for a prompt whose answer is short whatever the role. */
  maxTokens?: number;
}

/** A prompt answered with tool calls or free text. */
export function toolPrompt<S extends VarShape>(spec: PromptSpec<S>): PromptDef<S> {
  return { ...spec, vars: z.strictObject(spec.vars) as unknown as z.ZodObject<S> };
}

/** A prompt answered with JSON that `schema` accepts, requested under `name`. */
export function jsonPrompt<S extends VarShape, O extends z.ZodType>(
  spec: PromptSpec<S>,
  name: string,
  schema: O,
): PromptDef<S, O> & { output: { name: string; schema: O } } {
  return { ...toolPrompt(spec), output: { name, schema } };
}

/** A part of a prompt file: `<!-- part: <part> -->` in prompts/<file>.md, up to the next marker. */
export interface PartDef<S extends VarShape = VarShape> {
  file: string;
  part: string;
  vars: z.ZodObject<S>;
  /** Variables holding outside text, by the label of their block. */
  untrusted: { [K in keyof S]?: string };
}

/** Any declared part, whatever its variables. */
export interface AnyPart {
  file: string;
  part: string;
  vars: z.ZodType<Record<string, VarValue>>;
  untrusted: Partial<Record<string, string>>;
}

export function promptPart<S extends VarShape>(
  file: string,
  part: string,
  vars: S,
  untrusted: { [K in keyof S]?: string } = {},
): PartDef<S> {
  return { file, part, vars: z.strictObject(vars) as unknown as z.ZodObject<S>, untrusted };
}

/** Variable schemas the prompts share. */
export const text = z.string();
export const count = z.number().int();
export const flag = z.boolean();
/** Variables every step prompt shares. */
export const stepVarShape = { question: text, locale: text, stepTitle: text, stepDescription: text };
