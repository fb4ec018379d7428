import type { Logger } from "pino";
import { createDb, type Db, type DbOptions } from "./db";
import { isDatabaseUnavailable, noteDatabaseDown, noteDatabaseUp } from "./database/availability";
import { createHealthState, type HealthState } from "./health";
import { logger } from "./log";
import { createMetrics, type Metrics } from "./metric-registry";
import { startExpirySweeper } from "./operations/sweep";
import { Relay } from "./realtime/relay";
import { Wakeups } from "./realtime/wakeups";
import { startWebhookDispatcher, type DispatcherOptions } from "./webhooks/dispatcher";

export interface InstanceOptions extends DbOptions {
  databaseUrl: string;
}

export interface BackgroundOptions {
  /** How often the expiry sweep runs (WORK_GRAPH_SWEEP_INTERVAL_MS). */
  sweepIntervalMs: number;
  /** The outbox: webhook, Slack and GitHub deliveries. */
  outbox: DispatcherOptions;
}

/**
 * One app instance, built once (scripts/start.ts, each test's fixtures, the benchmark) and
 * passed in: its database client (every statement goes through it; see Executor in ./db.ts),
 * its metrics, its wake-up hub and relay, its health state and its background loops. Nothing
 * of it is found through a module-level registry.
 */
export class Instance {
  readonly db: Db;
  readonly metrics: Metrics;
  readonly wakeups: Wakeups;
  readonly relay: Relay;
  readonly health: HealthState;
  readonly log: Logger;
  private background: { stop(): Promise<void> }[] = [];

  constructor(options: InstanceOptions) {
    this.log = logger();
    this.metrics = createMetrics();
    this.health = createHealthState();
    this.db = createDb(options.databaseUrl, options, this.metrics);
    this.relay = new Relay(this.db);
    this.wakeups = new Wakeups(this.db, this.db.$executor().directConnectionString);
    // A commit the database does not announce (server/database/transaction.ts QuietCommit):
    // this instance's readers hear of it at once, other instances' through the relay.
    this.db.$executor().onQuietCommit = () => {
      this.wakeups.heardQuietCommitHere();
      this.relay.request();
    };
  }

  /** The expiry sweep and the outbox dispatcher, stopped by close(). */
  startBackground(options: BackgroundOptions): void {
    const sweeper = startExpirySweeper(
      this.db,
      options.sweepIntervalMs,
      (error) => {
        if (isDatabaseUnavailable(error)) noteDatabaseDown();
        else this.log.error({ err: error }, "expiry sweep failed");
      },
      () => {
        this.health.recordSweepPass(options.sweepIntervalMs);
        noteDatabaseUp();
      },
    );
    this.background.push(sweeper, startWebhookDispatcher(this.db, options.outbox));
  }

  /** Stops the background loops and the wake-ups, waits for pending relays, and closes the database client. */
  async close(): Promise<void> {
    await Promise.all(this.background.map((loop) => loop.stop()));
    this.background = [];
    await this.wakeups.close();
    await this.relay.settled();
    await this.db.$disconnect();
  }
}

export const createInstance = (options: InstanceOptions): Instance => new Instance(options);
