// The worker's workflow bundle entry: workflows only.
export { researchWorkflow } from './research';
export { researcherWorkflow, coderWorkflow } from './steps';
