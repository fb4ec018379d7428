/** What every CLI command gets: the connection (from flags or the environment), its session's leases, and the helpers to read its options. */
import { readFileSync } from "node:fs";
import { InvalidArgumentError, type Command } from "commander";
import { apiUrl, createWorkGraphClient, type WorkGraphClient } from "../sdk/client";
import { SessionLeases, type LeaseRef } from "../sdk/lease-holder";
import { EXIT } from "./exit-codes";
import { defaultStatePath, LeaseState } from "./state";

/** A mistake on the command line found by a command itself: exit 2 with the command's usage. */
export class UsageError extends Error {}

export interface Output {
  data: unknown;
  human: string;
  code?: number;
}

export interface Context {
  url: string;
  json: boolean;
  /** The project of `--project`'s default: $WORK_GRAPH_PROJECT, else none (the server decides). */
  project: string | undefined;
  /** The API client; `tokenOptional` for the one call that needs none (health). */
  client(options?: { tokenOptional?: boolean }): WorkGraphClient;
  /** The leases this session (its state file) claimed. */
  leases(): SessionLeases;
}

/** The options every command takes (declared on the program, accepted before or after the command). */
export interface GlobalOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

export function createContext(globals: GlobalOptions): Context {
  const url = (globals.url ?? process.env.WORK_GRAPH_URL ?? "http://localhost:3000").replace(/\/+$/, "");
  const token = globals.token ?? process.env.WORK_GRAPH_TOKEN ?? "";
  let client: WorkGraphClient | undefined;
  let leases: SessionLeases | undefined;
  const context: Context = {
    url,
    json: globals.json ?? false,
    project: process.env.WORK_GRAPH_PROJECT || undefined,
    client: ({ tokenOptional = false } = {}) => {
      if (!token && !tokenOptional) throw new UsageError("no token: set WORK_GRAPH_TOKEN or pass --token");
      // Waiting calls (claim --wait, attention wait) are held by the server for up to 60 s.
      return (client ??= createWorkGraphClient({ url, token: token || undefined, timeoutMs: 90_000 }));
    },
    leases: () => (leases ??= new SessionLeases(context.client(), {
      memory: new LeaseState(defaultStatePath(), apiUrl(url), token),
      renewInBackground: false, // one process per command: `work-graph renew` renews
      advice: {
        notHeld: (workItemId) => `claim it first (work-graph claim ${workItemId}), or pass --lease-id and --epoch`,
        fenced: (workItemId) => `If it is still yours to do, claim it again: work-graph claim ${workItemId}`,
      },
    })),
  };
  return context;
}

/** Where a command's result goes once its action is done (main prints it). */
export type Sink = (output: Output) => void;

/**
 * Wraps a command's action: commander passes the positional arguments, the command's options
 * and the command; the action gets a Context, its options and its arguments, and returns its Output.
 */
export function action<O, A extends unknown[]>(sink: Sink, run: (context: Context, options: O, ...args: A) => Promise<Output>) {
  return async (...received: unknown[]) => {
    const command = received.at(-1) as Command;
    const options = received.at(-2) as O;
    const args = received.slice(0, -2) as A;
    try {
      sink(await run(createContext(command.optsWithGlobals<GlobalOptions>()), options, ...args));
    } catch (error) {
      // Printed like commander's own usage errors: the message, then the command's usage line.
      if (error instanceof UsageError) command.error(error.message, { exitCode: EXIT.USAGE, code: "work-graph.usage" });
      throw error;
    }
  };
}

// ---------------------------------------------------------------------------------------------
// option values

export function integer(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError("It must be an integer.");
  return Number(value);
}

/** Seconds to wait (--wait, --timeout): a non-negative number, fractions allowed. */
export function secondsToWait(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value.trim())) throw new InvalidArgumentError("It must be a number of seconds.");
  return Number(value);
}

/** For an option given several times (--link, --option, --depends-on). */
export const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** For a list of names given several times or comma-separated (--capability a --capability b, --requires a,b). */
export const collectNames = (value: string, previous: string[] | false | undefined) =>
  [...(previous || []), ...value.split(",").map((name) => name.trim()).filter(Boolean)];

/** `--not-before`: an ISO-8601 time with its offset (`2026-12-05T09:00:00Z`); the server checks it too. */
export function isoTime(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value.trim())) {
    throw new InvalidArgumentError("It must be an ISO-8601 time with an offset, e.g. 2026-12-05T09:00:00Z.");
  }
  return value.trim();
}

/** `--project P` on the commands that claim, list or create (default: $WORK_GRAPH_PROJECT). */
export function withProjectOption(command: Command, what: string): Command {
  return command.option("--project <P>", `${what} (default: $WORK_GRAPH_PROJECT)`);
}

/** `--capability C` (repeatable): claim or list only what a worker with these capabilities may take. */
export function withCapabilityOption(command: Command): Command {
  return command.option("--capability <C>", "only items whose requires are among these capabilities (repeatable or comma-separated; default: the token's)", collectNames);
}

export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === "") throw new UsageError(`${flag} is required`);
  return value;
}

export function readStdin(): string {
  return readFileSync(0, "utf8");
}

/** `-` reads stdin, `@path` reads a file, anything else is the value itself. */
export function valueOrFile(value: string): string {
  if (value === "-") return readStdin();
  if (value.startsWith("@")) return readFileSync(value.slice(1), "utf8");
  return value;
}

export const newKey = () => globalThis.crypto.randomUUID();

/** `--lease-id` (and `--epoch`, looked up when omitted): a lease the caller names, used as given instead of the session's. */
export async function namedLease(context: Context, options: { leaseId?: string; epoch?: number }): Promise<LeaseRef | undefined> {
  if (options.leaseId) {
    const epoch = options.epoch ?? (await context.client().leases.get.query({ leaseId: options.leaseId })).epoch;
    return { leaseId: options.leaseId, epoch };
  }
  if (options.epoch !== undefined) throw new UsageError("--epoch needs --lease-id");
  return undefined;
}

/** The `--lease-id` / `--epoch` pair of every command that writes with a lease. */
export function withLeaseOptions(command: Command): Command {
  return command
    .option("--lease-id <ID>", "use this lease instead of the one this session claimed")
    .option("--epoch <N>", "its epoch (looked up when omitted)", integer);
}
