// Starting a chat completion's run: the session the conversation continues (the one the run named
// in its previous answer was started in, if that run is the caller's tenant's), else a new session,
// and the run in it with the model's effort and plans that approve themselves unless asked. (No
// Idempotency-Key here: a retried request is a new run.)
import { ApiError } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import { ResearchRequest } from '../../shared/schemas';
import type { Caller } from '../auth';
import type { KnowledgeService } from '../knowledge-service';
import type { ResearchService } from '../research-service';
import { questionWithContext, readConversation } from './conversation';
import { CHAT_MODELS, type ChatCompletionRequest, type ChatModel } from './schemas';

export interface ChatStartDeps {
  research: ResearchService;
  knowledge: Pick<KnowledgeService, 'createSession'>;
}

export interface ChatRun {
  runId: string;
  sessionId: string;
  /** True when the run continues the session of an earlier answer. */
  followUp: boolean;
}

/** The model, or an OpenAI-style 404 naming the ones there are. */
export function chatModel(model: string): ChatModel {
  if (model in CHAT_MODELS) return model as ChatModel;
  throw new ApiError(404, 'model_not_found', `The model \`${model}\` does not exist; use one of ${Object.keys(CHAT_MODELS).join(', ')}`, {
    param: 'model',
  });
}

export async function startChatRun(deps: ChatStartDeps, body: ChatCompletionRequest, tenant: string, caller?: Caller): Promise<ChatRun> {
  const effort = CHAT_MODELS[chatModel(body.model)];
  const conversation = readConversation(body.messages);
  const continued = conversation.previousRunId ? await deps.research.sessionOf(conversation.previousRunId, tenant) : undefined;
  const question = continued ? conversation.question : questionWithContext(conversation);
  // Parsed as POST /v1/research parses its body: the effort preset goes under the options.
  const request = ResearchRequest.parse({ question, options: { autoAcceptPlan: true, effort, ...body.deep_research } });
  // Checked before a new session is made, so a refused request leaves none behind.
  await deps.research.checkRequest(request, tenant, caller);
  const sessionId =
    continued ?? (await deps.knowledge.createSession(tenant, summarize(conversation.earlier[0]?.text ?? conversation.question, 120))).id;
  // Earlier turns are whatever the client sends (an assistant's answers, or words put in the
  // user's mouth): only the last user message is what the user said, for memory to learn from.
  const started = await deps.research.start({ ...request, sessionId }, tenant, undefined, { caller, said: conversation.question });
  return { runId: started.id, sessionId, followUp: continued !== undefined };
}
