import { defineSearchAttributeKey } from '@temporalio/common';

// Names and types match SEARCH_ATTRIBUTES in src/shared/constants.ts, which the dev server registers.
export const ResearchStatusKey = defineSearchAttributeKey('ResearchStatus', 'KEYWORD');
export const ResearchPhaseKey = defineSearchAttributeKey('ResearchPhase', 'KEYWORD');
export const ResearchTenantKey = defineSearchAttributeKey('ResearchTenant', 'KEYWORD');
export const ResearchStepCountKey = defineSearchAttributeKey('ResearchStepCount', 'INT');
export const ResearchQuestionKey = defineSearchAttributeKey('ResearchQuestion', 'TEXT');
