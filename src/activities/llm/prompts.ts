// The prompt registry: every prompt in prompts/ with the role whose model answers it, its variables
// (a zod schema: a missing or misspelt variable is an error), which variables hold untrusted text
// and the label of the block that wraps them, and the schema of the answer with a name of its own
// (the `response_format` name, so logs and test doubles can tell the prompts apart).
import { count, flag, jsonPrompt, stepVarShape as step, text, toolPrompt } from './prompt-def';
import {
  CitationVerdicts,
  GapReflection,
  KnowledgeChoice,
  CitedText,
  CodeDraft,
  CoordinatorDecision,
  JudgeVerdict,
  PageExtract,
  PlanDraft,
  QueryExpansion,
  ReportDraft,
  ReportOutline,
  ReportSection,
  ReportChanges,
} from '../../shared/llm-outputs';

export type { AnyPrompt, PromptDef, PromptOutput, PromptVars, StructuredPrompt } from './prompt-def';

export const PROMPTS = {
  coordinator: jsonPrompt(
    {
      file: 'coordinator',
      role: 'coordinator',
      vars: { question: text, requestedLocale: text, allowClarification: flag, clarifications: text },
      untrusted: { question: 'user_message', clarifications: 'clarifications' },
    },
    'CoordinatorDecision',
    CoordinatorDecision,
  ),
  rewrite: jsonPrompt(
    {
      file: 'rewrite',
      role: 'planner',
      vars: { question: text, locale: text, count, memory: text },
      untrusted: { question: 'user_message', memory: 'session_memory' },
    },
    'QueryExpansion',
    QueryExpansion,
  ),
  background: jsonPrompt(
    {
      file: 'background',
      role: 'planner',
      vars: { question: text, locale: text, sources: text, searchErrors: text },
      untrusted: { question: 'user_message', sources: 'sources' },
    },
    'BackgroundBrief',
    CitedText,
  ),
  planner: jsonPrompt(
    {
      file: 'planner',
      role: 'planner',
      vars: { question: text, locale: text, maxSteps: count, processing: flag, background: text, feedback: text, problems: text },
      untrusted: { question: 'user_message', background: 'background', feedback: 'feedback' },
    },
    // A draft that code repairs into a Plan (src/activities/roles/planner.ts); still named Plan.
    'Plan',
    PlanDraft,
  ),
  researcherTurn: toolPrompt({
    file: 'researcher-react',
    role: 'researcher',
    vars: {
      ...step,
      feedback: text,
      dependencies: text,
      web: flag,
      knowledge: flag,
      python: flag,
      inputDir: text,
      background: text,
    },
    untrusted: { question: 'user_message', dependencies: 'dependencies', background: 'background' },
  }),
  extractor: jsonPrompt(
    {
      file: 'extractor',
      role: 'researcher',
      // A summary and the evidence a page holds for one goal: a small model that loops runs on to
      // the role's limit otherwise (2,048 tokens, minutes on a CPU).
      maxTokens: 1_024,
      vars: { goal: text, url: text, title: text, page: text, truncation: text },
      untrusted: { page: 'page', title: 'title' },
    },
    'PageExtract',
    PageExtract,
  ),
  compressor: jsonPrompt(
    {
      file: 'compressor',
      role: 'researcher',
      vars: { ...step, transcript: text },
      untrusted: { question: 'user_message', transcript: 'transcript' },
    },
    'ResearchFindings',
    CitedText,
  ),
  coder: jsonPrompt(
    {
      file: 'coder',
      role: 'coder',
      vars: {
        question: text,
        stepTitle: text,
        stepDescription: text,
        packages: text,
        files: text,
        timeoutSeconds: count,
        memoryMb: count,
        previousStatus: text,
        previousMessage: text,
        previousCode: text,
        previousStderr: text,
        feedback: text,
        dependencies: text,
      },
      untrusted: { question: 'user_message', dependencies: 'dependencies' },
    },
    'CodeDraft',
    CodeDraft,
  ),
  coderResults: jsonPrompt(
    {
      file: 'coder-results',
      role: 'coder',
      vars: { ...step, explanation: text, ran: flag, runMessage: text, attempts: count, output: text, dependencies: text },
      untrusted: { question: 'user_message', output: 'output', dependencies: 'dependencies' },
    },
    'CodeFindings',
    CitedText,
  ),
  judge: jsonPrompt(
    {
      file: 'judge',
      role: 'judge',
      vars: { question: text, stepTitle: text, stepDescription: text, result: text, citedSources: count },
      untrusted: { question: 'user_message', result: 'result' },
    },
    'JudgeVerdict',
    JudgeVerdict,
  ),
  reporter: jsonPrompt(
    {
      file: 'reporter',
      role: 'reporter',
      vars: { question: text, locale: text, findings: text, references: text, notes: text, brief: flag, rejected: text },
      untrusted: { question: 'user_message', findings: 'findings', references: 'references' },
    },
    'ReportDraft',
    ReportDraft,
  ),
  reportOutline: jsonPrompt(
    {
      file: 'report-outline',
      role: 'reporter',
      vars: { question: text, locale: text, findings: text, notes: text, maxSections: count },
      untrusted: { question: 'user_message', findings: 'findings' },
    },
    'ReportOutline',
    ReportOutline,
  ),
  reportSection: jsonPrompt(
    {
      file: 'report-section',
      role: 'reporter',
      vars: { question: text, locale: text, outline: text, heading: text, covers: text, findings: text, references: text },
      untrusted: { question: 'user_message', findings: 'findings', references: 'references', outline: 'outline' },
    },
    'ReportSection',
    ReportSection,
  ),
  gapReflection: jsonPrompt(
    {
      file: 'gap-reflection',
      role: 'planner',
      vars: { question: text, findings: text, maxSteps: count, existingIds: text, processing: flag },
      untrusted: { question: 'user_message', findings: 'findings' },
    },
    'GapReflection',
    GapReflection,
  ),
  citationCheck: jsonPrompt(
    {
      file: 'citation-check',
      role: 'judge',
      vars: { claims: text, count: count },
      untrusted: { claims: 'claims' },
    },
    'CitationVerdicts',
    CitationVerdicts,
  ),
  changes: jsonPrompt(
    {
      file: 'changes',
      role: 'reporter',
      vars: { question: text, previous: text, current: text },
      untrusted: { question: 'user_message', previous: 'earlier_report', current: 'current_findings' },
    },
    'ReportChanges',
    ReportChanges,
  ),
  knowledgeRouter: jsonPrompt(
    {
      file: 'knowledge-router',
      role: 'planner',
      vars: { question: text, collections: text },
      untrusted: { question: 'user_message', collections: 'collections' },
    },
    'KnowledgeChoice',
    KnowledgeChoice,
  ),
};
export type PromptName = keyof typeof PROMPTS;
