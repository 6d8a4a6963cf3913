// The parts of prompts/model-call.md: what every model call may add to a role's prompt (the date,
// the user's steering, a request for JSON, a repair request) and the tool rules for a server
// without native tool calling. Rendered by render.ts, call.ts and text-tools.ts.
import { flag, promptPart, text } from './prompt-def';

const FILE = 'model-call';

/** The last line of every system prompt: when the prompt is for, and the run's locale. */
export const DATE_LINE = promptPart(FILE, 'date', { weekday: text, stamp: text, locale: text });
/** After the system prompt of every call made after the user steered the run. */
export const GUIDANCE = promptPart(FILE, 'guidance', { guidance: text }, { guidance: 'user_guidance' });
/** A structured answer asked for as a forced function call: the function's description. */
export const ANSWER_FUNCTION = promptPart(FILE, 'answer-function', { name: text });
/** A structured answer asked for as `json_object`: the schema goes into the system prompt. */
export const JSON_OBJECT = promptPart(FILE, 'json-object', { name: text, schema: text });
/** A structured answer that could not be used: what was wrong, and the request to answer again. */
export const REPAIR_JSON = promptPart(FILE, 'repair-json', { problem: text, cutOff: flag });
/** Where a repair request shortens the answer it quotes. */
export const CLIPPED = promptPart(FILE, 'clipped', {});
/** The tools and the answer format, for a server that refuses `tools` (JSON-action mode). */
export const JSON_ACTIONS = promptPart(FILE, 'json-actions', { catalog: text, first: text });
/** One tool of that catalog. */
export const JSON_ACTION_TOOL = promptPart(FILE, 'json-action-tool', { name: text, description: text, parameters: text });

export const MODEL_CALL_PARTS = [DATE_LINE, GUIDANCE, ANSWER_FUNCTION, JSON_OBJECT, REPAIR_JSON, CLIPPED, JSON_ACTIONS, JSON_ACTION_TOOL];
