/**
 * The CLI's memory of the leases it claimed, so `note <item>`, `renew <item>`, `release <item>`…
 * find their lease id and epoch without the agent handling them. The file is the session
 * (WORK_GRAPH_STATE), kept across the processes of one command each; the rules (which lease a
 * write uses, refusing one the session did not obtain or lost, forgetting an ended one) are
 * SessionLeases' (sdk/lease-holder.ts). Keyed by server URL + token fingerprint (a hash, not
 * the token) + item id, so an entry is only used with the token that claimed it.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { LeaseMemory } from "../sdk/lease-holder";

export interface RememberedLease {
  leaseId: string;
  epoch: number;
  workItemId: string;
  workerId: string;
  expiresAt: string;
  token: string;
  savedAt: string;
  /** Set when the server fenced this lease: the session never writes with it again. */
  fenced?: { kind: string; at: string };
}

interface StateFile {
  version: 1;
  leases: Record<string, RememberedLease>;
}

export const defaultStatePath = () => process.env.WORK_GRAPH_STATE || path.join(os.homedir(), ".work-graph", "cli-state.json");

/** Not the token: a short hash, enough to tell whether an entry was made with the same token. */
export const tokenFingerprint = (token: string) => createHash("sha256").update(token).digest("hex").slice(0, 16);

const PRUNE_AFTER_MS = 7 * 24 * 3600 * 1000;

export class LeaseState implements LeaseMemory {
  constructor(
    readonly file: string,
    private readonly serverUrl: string,
    private readonly token: string,
  ) {}

  /** Server URL + item, per token: two agents sharing the file (or one item claimed by two tokens) never mix. */
  private key(item: string) {
    return `${this.serverUrl} ${tokenFingerprint(this.token)} ${item}`;
  }

  private read(): StateFile {
    try {
      const parsed = JSON.parse(readFileSync(this.file, "utf8")) as StateFile;
      if (parsed && parsed.version === 1 && parsed.leases && typeof parsed.leases === "object") return parsed;
    } catch {
      // missing or unreadable: start empty
    }
    return { version: 1, leases: {} };
  }

  private write(state: StateFile) {
    const cutoff = Date.now() - PRUNE_AFTER_MS;
    for (const [key, entry] of Object.entries(state.leases)) {
      if (Date.parse(entry.expiresAt) < cutoff) delete state.leases[key];
    }
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, this.file); // atomic: a concurrent reader sees the old or the new file
  }

  /** The lease this token last claimed on `item` at this server, if any. */
  get(item: string): RememberedLease | null {
    const entry = this.read().leases[this.key(item)];
    return entry && entry.token === tokenFingerprint(this.token) ? entry : null;
  }

  remember(lease: { id: string; epoch: number; workItemId: string; workerId: string; expiresAt: string }) {
    const state = this.read();
    state.leases[this.key(lease.workItemId)] = {
      leaseId: lease.id,
      epoch: lease.epoch,
      workItemId: lease.workItemId,
      workerId: lease.workerId,
      expiresAt: lease.expiresAt,
      token: tokenFingerprint(this.token),
      savedAt: new Date().toISOString(),
    };
    this.write(state);
  }

  /** Marks the remembered lease `leaseId` on `item` as fenced: it stays refused until the session claims again. */
  fence(item: string, leaseId: string, kind: string) {
    const state = this.read();
    const entry = state.leases[this.key(item)];
    if (!entry || entry.leaseId !== leaseId) return;
    entry.fenced = { kind, at: new Date().toISOString() };
    this.write(state);
  }

  /** Forgets the entry for `item` (only if it is still `leaseId`, when given). */
  forget(item: string, leaseId?: string) {
    const state = this.read();
    const key = this.key(item);
    const entry = state.leases[key];
    if (!entry || (leaseId && entry.leaseId !== leaseId)) return;
    delete state.leases[key];
    this.write(state);
  }
}
