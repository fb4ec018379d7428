import type { Logger } from "pino";
import { createDb, type Db, type DbOptions } from "./db";
import { isDatabaseUnavailable, noteDatabaseDown, noteDatabaseUp } from "./database/availability";
import { createHealthState, type HealthState } from "./health";
import { logger } from "./log";
import { createMetrics, type Metrics } from "./metric-registry";
import { startExpirySweeper, type SweepCleanup } from "./operations/sweep";
import { Relay } from "./realtime/relay";
import { Wakeups } from "./realtime/wakeups";
import { startWebhookDispatcher, type DispatcherOptions } from "./integrations/webhooks/dispatcher";

const BACKGROUND_POOL_SIZE = 4;

export interface InstanceOptions extends DbOptions {
  databaseUrl: string;
}

export interface BackgroundOptions {
  /** How often the expiry sweep runs (WORK_GRAPH_SWEEP_INTERVAL_MS). */
  sweepIntervalMs: number;
  /** What the sweep cleans up after its own work (an integration's old rows). */
  sweepCleanups?: readonly SweepCleanup[];
  /** The outbox's delivery options, on the background loops' own client. */
  outbox: (db: Db) => DispatcherOptions;
}

/**
 * One app instance, built once (scripts/start.ts, each test's fixtures, the benchmark) and
 * passed in: its database client (every statement goes through it; see Executor in ./db.ts)
 * and, once its background loops run, their small one; its metrics, its wake-up hub and relay, its health state and its background loops. Nothing
 * of it is found through a module-level registry.
 */
export class Instance {
  readonly db: Db;
  readonly metrics: Metrics;
  readonly wakeups: Wakeups;
  readonly relay: Relay;
  readonly health: HealthState;
  readonly log: Logger;
  private readonly options: InstanceOptions;
  private background: { stop(): Promise<void> }[] = [];
  private backgroundDb: Db | null = null;

  constructor(options: InstanceOptions) {
    this.options = options;
    this.log = logger();
    this.metrics = createMetrics();
    this.health = createHealthState();
    this.db = this.client(options);
    this.relay = new Relay(this.db);
    this.wakeups = new Wakeups(this.db, this.db.$executor().directConnectionString);
  }

  /** A client of this instance: its metrics, and its quiet commits announced. */
  private client(options: InstanceOptions): Db {
    const db = createDb(options.databaseUrl, options, this.metrics);
    // A commit the database does not announce (server/database/transaction.ts QuietCommit):
    // this instance's readers hear of it at once, other instances' through the relay.
    db.$executor().onQuietCommit = () => {
      this.wakeups.heardQuietCommitHere();
      this.relay.request();
    };
    return db;
  }

  /**
   * The expiry sweep and the outbox dispatcher, stopped by close(). They get a small pool of
   * their own, without the API's statement timeout: requests filling the API's pool never
   * starve them (nor read as a database outage).
   */
  startBackground(options: BackgroundOptions): void {
    const db = (this.backgroundDb ??= this.client({ ...this.options, poolSize: BACKGROUND_POOL_SIZE, statementTimeoutMs: 0 }));
    const sweeper = startExpirySweeper(
      db,
      options.sweepIntervalMs,
      (error) => {
        if (isDatabaseUnavailable(error)) noteDatabaseDown();
        else this.log.error({ err: error }, "expiry sweep failed");
      },
      () => {
        this.health.recordSweepPass(options.sweepIntervalMs);
        noteDatabaseUp();
      },
      options.sweepCleanups,
    );
    this.background.push(sweeper, startWebhookDispatcher(db, options.outbox(db)));
  }

  /** Stops the background loops and the wake-ups, waits for pending relays, and closes the database client. */
  async close(): Promise<void> {
    await Promise.all(this.background.map((loop) => loop.stop()));
    this.background = [];
    await this.wakeups.close();
    await this.relay.settled();
    await Promise.all([this.db.$disconnect(), this.backgroundDb?.$disconnect()]);
  }
}

export const createInstance = (options: InstanceOptions): Instance => new Instance(options);
