// A researcher's conversation with the model, one row per message at positions the workflow
// chooses: a retried activity rewrites the same position, so nothing is doubled.
import type OpenAI from 'openai';
import type pg from 'pg';

export type Message = OpenAI.Chat.ChatCompletionMessageParam;

export function conversationsTable(pool: pg.Pool) {
  return {
    async load(researchId: string, convKey: string): Promise<{ seq: number; message: Message }[]> {
      const { rows } = await pool.query<{ seq: number; message: Message }>(
        'SELECT seq, message FROM conversation_messages WHERE research_id = $1 AND conv_key = $2 ORDER BY seq',
        [researchId, convKey],
      );
      return rows;
    },
    /** Writes a message unless one is already at that position; returns the one that is there. */
    async putFirst(researchId: string, convKey: string, seq: number, message: Message): Promise<Message> {
      await pool.query(
        `INSERT INTO conversation_messages (research_id, conv_key, seq, message) VALUES ($1, $2, $3, $4)
         ON CONFLICT (research_id, conv_key, seq) DO NOTHING`,
        [researchId, convKey, seq, JSON.stringify(message)],
      );
      const { rows } = await pool.query<{ message: Message }>(
        'SELECT message FROM conversation_messages WHERE research_id = $1 AND conv_key = $2 AND seq = $3',
        [researchId, convKey, seq],
      );
      return rows[0]!.message;
    },
    async put(researchId: string, convKey: string, seq: number, message: Message): Promise<void> {
      await pool.query(
        `INSERT INTO conversation_messages (research_id, conv_key, seq, message) VALUES ($1, $2, $3, $4)
         ON CONFLICT (research_id, conv_key, seq) DO UPDATE SET message = EXCLUDED.message`,
        [researchId, convKey, seq, JSON.stringify(message)],
      );
    },
  };
}
export type ConversationsTable = ReturnType<typeof conversationsTable>;
