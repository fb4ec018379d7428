import type { Db } from "../db";
import { logger } from "../log";
import { notifyRelayed } from "../sql/notifications";

/** Least time between two relays of one instance: under load one NOTIFY covers every commit of its window. */
const RELAY_SPACING_MS = 50;

/**
 * Commits the database does not announce (claims, renewals, notes, releases that readied
 * nothing) reach other app instances' event streams through one relayed NOTIFY (RELAYED) sent
 * after them: one at a time per instance and at most one every RELAY_SPACING_MS, so those
 * commits stay off PostgreSQL's notify lock and a busy instance adds at most 20 small notifying
 * commits (each a WAL flush) a second. An instance that dies between a commit and its relay
 * leaves other instances' readers to their periodic re-check (server/queries/event-stream.ts
 * RECHECK_MS); no waiting claim depends on a relay.
 */
export class Relay {
  private pending = false;
  private sending: Promise<void> | null = null;

  constructor(private readonly db: Db) {}

  /** Relays a commit of this instance to the others' event streams. */
  request(): void {
    this.pending = true;
    this.sending ??= this.send().finally(() => {
      this.sending = null;
    });
  }

  /** Resolves once every requested relay has been sent (close, tests). */
  async settled(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private async send(): Promise<void> {
    while (this.pending) {
      this.pending = false;
      const started = performance.now();
      await notifyRelayed(this.db).catch((error: unknown) => logger().warn({ err: error }, "relaying a commit to other instances failed"));
      const rest = RELAY_SPACING_MS - (performance.now() - started);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest).unref());
    }
  }
}
