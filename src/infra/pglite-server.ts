// Serves one PGlite database to many `pg` connections over the PostgreSQL wire protocol.
//
// PGlite is a single PostgreSQL session: one unnamed statement, one unnamed portal, one transaction
// at a time. Every connection is multiplexed onto it, so a connection must keep the session from
// its first message until the session is back at rest: a ReadyForQuery that says idle ('I').
// Until then (an extended-query sequence Parse/Bind/Describe/Execute not yet closed by its Sync,
// a transaction block 'T' or a failed one 'E', a COPY) no other connection's message runs.
//
// This replaces @electric-sql/pglite-socket's server, whose queue takes each protocol message on
// its own and keeps one connection's messages together only inside an explicit transaction: when a
// transaction ended, the Parse/Bind/Execute of the connections waiting behind it interleaved, and a
// statement ran with another connection's parameters or returned another query's rows (issue 38:
// "bind message supplies N parameters", an INSERT that never ran, another tenant's rows).
//
// It also hands all of a connection's complete messages to PGlite in one call (one trip into the
// WASM module per query instead of one per message) and writes each answer with one socket write.
//
// Notifications: the session LISTENs on behalf of every connection that sent LISTEN, and a
// NotificationResponse, which PGlite emits in the answer of whichever connection committed the
// NOTIFY, is taken out of that answer and written to the connections listening on its channel,
// as PostgreSQL would deliver it.
import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

export interface PgliteServerOptions {
  host: string;
  port: number;
  /** Sockets at once; a connection costs a socket here, not a backend. */
  maxConnections?: number;
  /** A connection that holds the session (inside a transaction, or mid-sequence) and sends
   *  nothing for this long is cut and its transaction rolled back, so it cannot stall the others
   *  forever (PostgreSQL's idle_in_transaction_session_timeout). */
  holdTimeoutMs?: number;
}

export interface PgliteServer {
  readonly port: number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);

/** One client socket: its unparsed bytes and the channels it listens on. */
class Connection {
  private pending: Buffer = Buffer.alloc(0);
  started = false;
  closed = false;
  readonly channels = new Set<string>();

  constructor(readonly socket: net.Socket) {}

  append(data: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, data]) : data;
  }

  /** Before startup: the next length-prefixed packet (SSLRequest, CancelRequest, StartupMessage). */
  takeStartupPacket(): Buffer | undefined {
    if (this.pending.length < 8) return undefined;
    const len = this.pending.readInt32BE(0);
    if (this.pending.length < len) return undefined;
    const packet = this.pending.subarray(0, len);
    this.pending = this.pending.subarray(len);
    return packet;
  }

  /** After startup: every complete message buffered, as one batch. Terminate ends the batch. */
  takeMessages(): { batch: Buffer | undefined; terminate: boolean } {
    let end = 0;
    const buf = this.pending;
    while (end + 5 <= buf.length) {
      const len = 1 + buf.readInt32BE(end + 1);
      if (end + len > buf.length) break;
      if (buf[end] === 0x58 /* X */) {
        const batch = end ? buf.subarray(0, end) : undefined;
        this.pending = Buffer.alloc(0);
        return { batch, terminate: true };
      }
      end += len;
    }
    if (!end) return { batch: undefined, terminate: false };
    const batch = buf.subarray(0, end);
    this.pending = buf.subarray(end);
    return { batch, terminate: false };
  }

  hasCompleteMessage(): boolean {
    const buf = this.pending;
    if (!this.started) return buf.length >= 8 && buf.length >= buf.readInt32BE(0);
    return buf.length >= 5 && buf.length >= 1 + buf.readInt32BE(1);
  }

  write(data: Uint8Array): void {
    if (!this.closed && this.socket.writable) this.socket.write(data);
  }
}

/** What PGlite answered to one batch: the bytes for its sender, the notifications for listeners,
 *  and the transaction status of a closing ReadyForQuery ('I', 'T', 'E'), if the answer ends in one. */
function splitAnswer(answer: Buffer): { own: Buffer; notifications: { channel: string; bytes: Buffer }[]; status: string | undefined } {
  const notifications: { channel: string; bytes: Buffer }[] = [];
  const kept: Buffer[] = [];
  let keptFrom = 0;
  let pos = 0;
  let lastType = 0;
  let lastAt = 0;
  while (pos + 5 <= answer.length) {
    const type = answer[pos] ?? 0;
    const next = pos + 1 + answer.readInt32BE(pos + 1);
    if (type === 0x41 /* NotificationResponse */) {
      const channelEnd = answer.indexOf(0, pos + 9);
      notifications.push({ channel: answer.toString('utf8', pos + 9, channelEnd), bytes: Buffer.from(answer.subarray(pos, next)) });
      if (pos > keptFrom) kept.push(answer.subarray(keptFrom, pos));
      keptFrom = next;
    }
    lastType = type;
    lastAt = pos;
    pos = next;
  }
  const own = notifications.length ? Buffer.concat([...kept, answer.subarray(keptFrom)]) : answer;
  const status = lastType === 0x5a /* ReadyForQuery */ ? String.fromCharCode(answer[lastAt + 5] ?? 0) : undefined;
  return { own, notifications, status };
}

/** LISTEN / UNLISTEN statements in the SQL of a Query or Parse message (lower-cased channels). */
function listenChanges(batch: Buffer): { listen: string[]; unlisten: string[] } {
  const listen: string[] = [];
  const unlisten: string[] = [];
  if (batch.indexOf('isten') < 0 && batch.indexOf('ISTEN') < 0) return { listen, unlisten };
  let pos = 0;
  while (pos + 5 <= batch.length) {
    const type = batch[pos];
    const next = pos + 1 + batch.readInt32BE(pos + 1);
    if (type === 0x51 /* Query */ || type === 0x50 /* Parse */) {
      let from = pos + 5;
      if (type === 0x50) from = batch.indexOf(0, from) + 1; // skip the statement name
      const sql = batch.toString('utf8', from, next - 1);
      if (/listen/i.test(sql)) {
        for (const m of sql.matchAll(/(?:^|;)\s*(un)?listen\s+("(?:[^"]|"")+"|[\w$]+|\*)/gi)) {
          const raw = m[2] ?? '';
          const channel = raw.startsWith('"') ? raw.slice(1, -1).replace(/""/g, '"') : raw.toLowerCase();
          (m[1] ? unlisten : listen).push(channel);
        }
      }
    }
    pos = next;
  }
  return { listen, unlisten };
}

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const head = Buffer.alloc(5);
  head[0] = 0x45; // ErrorResponse
  head.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([head, fields]);
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function queryMessage(sql: string): Buffer {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const head = Buffer.alloc(5);
  head[0] = 0x51;
  head.writeInt32BE(4 + text.length, 1);
  return Buffer.concat([head, text]);
}

/** The one PGlite session and whose turn it is. */
class Session {
  private owner: Connection | undefined;
  private readonly waiting: Connection[] = [];
  private pumping: Promise<void> | undefined;
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: PGlite,
    private readonly holdTimeoutMs: number,
    private readonly all: Set<Connection>,
  ) {}

  /** A connection has new bytes: run them now if the session is free or already its own, else queue. */
  offer(conn: Connection): void {
    if (conn !== this.owner && !this.waiting.includes(conn)) this.waiting.push(conn);
    this.pump();
  }

  /** A socket closed. If it held the session, the pump rolls back what it left open (abandon). */
  leave(conn: Connection): void {
    conn.closed = true;
    this.all.delete(conn);
    conn.channels.clear();
    this.pump();
  }

  /** Runs batches one after another until nobody has work that may run. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = this.drain().finally(() => {
      this.pumping = undefined;
      if (this.runnable()) this.pump();
    });
  }

  async idle(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  private runnable(): Connection | undefined {
    if (this.owner) {
      if (this.owner.closed) return this.owner;
      return this.owner.hasCompleteMessage() ? this.owner : undefined;
    }
    for (let next = this.waiting[0]; next; next = this.waiting[0]) {
      if (!next.closed && next.hasCompleteMessage()) return next;
      this.waiting.shift();
    }
    return undefined;
  }

  private async drain(): Promise<void> {
    for (let conn = this.runnable(); conn; conn = this.runnable()) {
      if (conn !== this.owner) {
        this.waiting.shift();
        this.owner = conn;
      }
      this.clearHold();
      try {
        if (conn.closed) await this.abandon(conn);
        else if (!conn.started) await this.startup(conn);
        else await this.runBatch(conn);
      } catch (err) {
        // PGlite threw instead of answering with an ErrorResponse: the connection cannot go on.
        if (conn.closed) this.release(conn);
        conn.write(errorResponse('XX000', `embedded database: ${(err as Error).message}`));
        conn.socket.destroy();
      }
      if (this.owner && !this.owner.closed) this.armHold(this.owner);
    }
  }

  private async startup(conn: Connection): Promise<void> {
    const packet = conn.takeStartupPacket();
    if (!packet) return;
    const code = packet.readInt32BE(4);
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
      conn.write(Buffer.from('N'));
      this.release(conn);
      return;
    }
    if (code === CANCEL_REQUEST || code !== PROTOCOL_3) {
      // No backend to signal: a cancel is dropped, as PGlite cannot interrupt a statement.
      this.release(conn);
      conn.socket.destroy();
      return;
    }
    const answer = await this.exec(packet);
    conn.started = true;
    conn.write(answer);
    if (answer.length >= 6 && answer[answer.length - 6] === 0x5a && answer[answer.length - 1] === 0x49) this.release(conn);
  }

  private async runBatch(conn: Connection): Promise<void> {
    const { batch, terminate } = conn.takeMessages();
    if (batch) {
      const changes = listenChanges(batch);
      const { own, notifications, status } = splitAnswer(await this.exec(batch));
      for (const c of changes.unlisten) {
        if (c === '*') conn.channels.clear();
        else conn.channels.delete(c);
      }
      for (const c of changes.listen) conn.channels.add(c);
      conn.write(own);
      this.deliver(notifications);
      // UNLISTEN acts on the whole session: listen again where another connection still does.
      if (status === 'I') {
        for (const c of changes.unlisten) await this.relisten(c);
        this.release(conn);
      }
    }
    if (terminate) conn.socket.end();
  }

  private async relisten(channel: string): Promise<void> {
    const channels = channel === '*' ? new Set([...this.all].flatMap((c) => [...c.channels])) : new Set([channel]);
    for (const c of channels) {
      if ([...this.all].some((o) => o.channels.has(c))) await this.exec(queryMessage(`LISTEN ${quoteIdent(c)}`));
    }
  }

  /** The owner went away holding the session: end its sequence and transaction, then free the session. */
  private async abandon(conn: Connection): Promise<void> {
    if (conn.started) {
      await this.exec(SYNC);
      if (this.db.isInTransaction()) await this.exec(queryMessage('ROLLBACK'));
    }
    this.release(conn);
  }

  private release(conn: Connection): void {
    if (this.owner === conn) this.owner = undefined;
  }

  private deliver(notifications: { channel: string; bytes: Buffer }[]): void {
    for (const n of notifications) {
      for (const c of this.all) if (c.channels.has(n.channel)) c.write(n.bytes);
    }
  }

  private armHold(conn: Connection): void {
    if (this.holdTimeoutMs <= 0) return;
    this.holdTimer = setTimeout(() => {
      if (this.owner !== conn) return;
      conn.write(errorResponse('25P03', 'terminating connection: it held the embedded database idle inside a transaction too long'));
      conn.socket.destroy(); // 'close' marks it closed; the pump then rolls its transaction back
    }, this.holdTimeoutMs);
    this.holdTimer.unref();
  }

  private clearHold(): void {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
  }

  private async exec(message: Uint8Array): Promise<Buffer> {
    // Each chunk is a view of PGlite's output buffer, reused by the next write: copied at once.
    const chunks: Buffer[] = [];
    await this.db.runExclusive(() => this.db.execProtocolRawStream(message, { onRawData: (data) => void chunks.push(Buffer.from(data)) }));
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  }
}

/** Listens on host:port and serves `db` until close(). */
export async function servePglite(db: PGlite, opts: PgliteServerOptions): Promise<PgliteServer> {
  const connections = new Set<Connection>();
  const session = new Session(db, opts.holdTimeoutMs ?? 60_000, connections);
  const maxConnections = opts.maxConnections ?? 128;
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    if (connections.size >= maxConnections) {
      socket.end(errorResponse('53300', 'sorry, too many clients already'));
      return;
    }
    const conn = new Connection(socket);
    connections.add(conn);
    socket.on('data', (data) => {
      conn.append(data);
      session.offer(conn);
    });
    socket.on('error', () => undefined); // 'close' follows
    socket.on('close', () => session.leave(conn));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const c of connections) c.socket.destroy();
      await closed;
      await session.idle();
    },
  };
}
