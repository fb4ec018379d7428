import pg from "pg";
import { databaseConnectTimeoutMs } from "../config";
import { logger } from "../log";
import { EVENTS_CHANNEL, listenForEvents } from "../sql/notifications";

/** What a listener hears: event types that committed, or "unknown" after a reconnect (messages may have been missed). */
export type Heard = { types: ReadonlySet<string> } | "unknown";

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * The one LISTEN connection of an app instance: a plain `pg` client outside the query pool,
 * reconnecting with backoff when it drops. Messages arriving in one burst are folded into one
 * call of `onHeard` on the next macrotask, so a busy database wakes waiters once per burst.
 */
export class CommitListener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private reconnectDelay = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pending = new Set<string>();
  private flushScheduled = false;

  constructor(
    private readonly connectionString: string,
    private readonly onHeard: (heard: Heard) => void,
    private readonly onError: (error: unknown) => void = (error) => logger().error({ err: error }, "commit listener failed"),
  ) {}

  /** Resolves once LISTEN is in place (connecting on first use); rejects if the database cannot be reached. */
  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new Error("commit listener is closed"));
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: "work-graph-listener",
      connectionTimeoutMillis: databaseConnectTimeoutMs(),
    });
    client.on("notification", (message) => {
      if (message.channel !== EVENTS_CHANNEL) return;
      this.pending.add(message.payload ?? "");
      this.scheduleFlush();
    });
    const lost = (error?: unknown) => {
      if (this.client !== client) return;
      this.client = null;
      client.removeAllListeners("notification");
      client.end().catch(() => {});
      if (this.closed) return;
      if (error) this.onError(error);
      this.scheduleReconnect();
    };
    client.on("error", lost);
    client.on("end", () => lost());
    try {
      await client.connect();
      await listenForEvents(client);
    } catch (error) {
      client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.reconnectDelay = RECONNECT_MIN_MS;
  }

  private scheduleReconnect() {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.ready().then(
        // Whatever committed while we were deaf is unknown: every waiter re-checks.
        () => this.onHeard("unknown"),
        (error) => {
          this.onError(error);
          this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
          this.scheduleReconnect();
        },
      );
    }, this.reconnectDelay);
  }

  private scheduleFlush() {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      const types = this.pending;
      this.pending = new Set();
      this.onHeard({ types });
    });
  }

  /** The backend pid of the LISTEN connection (tests use it to find it in pg_stat_activity). */
  get backendPid(): number | null {
    return (this.client as (pg.Client & { processID?: number }) | null)?.processID ?? null;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
