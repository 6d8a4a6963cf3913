// A researcher's conversation with the model, one row per message at positions the workflow
// chooses: a retried activity rewrites the same position, so nothing is doubled.
import type OpenAI from 'openai';
import type pg from 'pg';

export type Message = OpenAI.Chat.ChatCompletionMessageParam;

export function conversationsTable(pool: pg.Pool) {
  /** Writes messages at their positions in one statement, replacing what was there (the last of
   *  two for one position). */
  async function putAll(researchId: string, convKey: string, messages: { seq: number; message: Message }[]): Promise<void> {
    const bySeq = new Map(messages.map((m) => [m.seq, m.message]));
    if (!bySeq.size) return;
    await pool.query(
      `INSERT INTO conversation_messages (research_id, conv_key, seq, message)
       SELECT $1, $2, m.seq, m.message::jsonb FROM unnest($3::int[], $4::text[]) AS m(seq, message)
       ON CONFLICT (research_id, conv_key, seq) DO UPDATE SET message = EXCLUDED.message`,
      [researchId, convKey, [...bySeq.keys()], [...bySeq.values()].map((m) => JSON.stringify(m))],
    );
  }
  return {
    async load(researchId: string, convKey: string): Promise<{ seq: number; message: Message }[]> {
      const { rows } = await pool.query<{ seq: number; message: Message }>(
        'SELECT seq, message FROM conversation_messages WHERE research_id = $1 AND conv_key = $2 ORDER BY seq',
        [researchId, convKey],
      );
      return rows;
    },
    /** Writes a message unless one is already at that position; returns the one that is there.
     *  One statement (two only in a race): the insert's row when it wrote one, else the row that
     *  was there before. */
    async putFirst(researchId: string, convKey: string, seq: number, message: Message): Promise<Message> {
      const { rows } = await pool.query<{ message: Message }>(
        `WITH written AS (
           INSERT INTO conversation_messages (research_id, conv_key, seq, message) VALUES ($1, $2, $3, $4)
           ON CONFLICT (research_id, conv_key, seq) DO NOTHING RETURNING message)
         SELECT message FROM written
         UNION ALL
         SELECT message FROM conversation_messages
          WHERE research_id = $1 AND conv_key = $2 AND seq = $3 AND NOT EXISTS (SELECT 1 FROM written)`,
        [researchId, convKey, seq, JSON.stringify(message)],
      );
      if (rows[0]) return rows[0].message;
      // Another attempt's insert committed while this statement waited on it, after this
      // statement's snapshot: a second look sees it.
      const again = await pool.query<{ message: Message }>(
        'SELECT message FROM conversation_messages WHERE research_id = $1 AND conv_key = $2 AND seq = $3',
        [researchId, convKey, seq],
      );
      return again.rows[0]!.message;
    },
    async put(researchId: string, convKey: string, seq: number, message: Message): Promise<void> {
      await putAll(researchId, convKey, [{ seq, message }]);
    },
    putAll,
  };
}
export type ConversationsTable = ReturnType<typeof conversationsTable>;
