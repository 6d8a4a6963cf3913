// The phases: activities that chain several roles' model calls (and the tools between them) in one
// activity task, so a run pays the Temporal server for fewer tasks. Each part is its role's own
// call; a phase adds the order, the keys a retry reuses (withinCall) and what passes between them.
// The worker registers them with the roles' activities as the model-call group (src/activities/
// index.ts).
import type { RoleDeps } from '../role-kit/role';
import { createBackgroundPhaseActivities } from './background-phase';
import { createCoderStepActivities } from './coder-step';
import { createReportPhaseActivities } from './report';
import { createResearcherActivities } from './researcher-turn';

export function createPhaseActivities(deps: RoleDeps) {
  return {
    ...createBackgroundPhaseActivities(deps),
    ...createResearcherActivities(deps),
    ...createCoderStepActivities(deps),
    ...createReportPhaseActivities(deps),
  };
}
