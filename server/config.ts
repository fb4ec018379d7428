import { availableParallelism } from "node:os";
import { z } from "zod";

/**
 * The server's settings: every environment variable it reads, with its type, range and
 * default, in one zod-validated schema (README "Configuration" lists the same variables;
 * tests/configuration/settings.test.ts holds the two together, and only this module reads
 * process.env). `npm start` checks them all before anything starts (configurationProblems);
 * the accessors below read their variable on every call, so a change at run time (tests,
 * `vi.stubEnv`) is seen, but parse it again only when its text changed.
 */

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
const PREPARED_STATEMENTS = ["named", "unnamed"] as const;

interface Setting<T> {
  schema: z.ZodType<T, string>;
  /** What the variable accepts, for the message naming a bad value. */
  accepts: string;
  /** Used when the variable is unset or empty (README's default column says the same). */
  fallback?: T;
  /** Its value is never repeated in a message. */
  secret?: boolean;
}

const wholeNumber = (min: number, max: number, fallback?: number): Setting<number> => ({
  schema: z.string().trim().regex(/^\d+$/).transform(Number).pipe(z.number().min(min).max(max)),
  accepts: `a whole number from ${min} to ${max}`,
  fallback,
});

const decimal = (min: { above: number } | { from: number }, max: number, fallback: number): Setting<number> => ({
  schema: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number)
    .pipe("above" in min ? z.number().gt(min.above).max(max) : z.number().min(min.from).max(max)),
  accepts: `a number ${"above" in min ? `above ${min.above}` : `from ${min.from}`} up to ${max}`,
  fallback,
});

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, kb: 1000, kib: 1024, mb: 1000 ** 2, mib: 1024 ** 2, gb: 1000 ** 3, gib: 1024 ** 3 };
const MAX_SIZE = 1024 ** 3;

const size = (fallback: number): Setting<number> => ({
  schema: z
    .string()
    .trim()
    .regex(/^(\d+)\s*(b|kb|kib|mb|mib|gb|gib)?$/i)
    .transform((text) => {
      const [, amount, unit = ""] = /^(\d+)\s*([a-z]*)$/i.exec(text)!;
      return Number(amount) * SIZE_UNITS[unit.toLowerCase()]!;
    })
    .pipe(z.number().int().min(1).max(MAX_SIZE)),
  accepts: `a size in bytes from 1 to 1 GiB, as a whole number of bytes or with a unit (B, kB, KiB, MB, MiB, GB, GiB), e.g. 1048576 or 1MiB`,
  fallback,
});

const url = (protocols: RegExp, accepts: string): Setting<string> => ({ schema: z.url({ protocol: protocols }), accepts });

const text = (accepts: string, pattern = /\S/): Setting<string> => ({ schema: z.string().regex(pattern), accepts });

/** A comma-separated list of group names (e.g. `wg-admins, platform`). */
const groupList: Setting<string[]> = {
  schema: z.string().transform((list) => list.split(",").map((group) => group.trim()).filter((group) => group.length > 0)),
  accepts: "a comma-separated list of group names",
};

const KEY_BYTES = 32;
const secretKey: Setting<string> = {
  schema: z
    .string()
    .trim()
    .refine((key) => (/^[0-9a-f]{64}$/i.test(key) ? true : /^[A-Za-z0-9+/_-]+={0,2}$/.test(key) && Buffer.from(key, "base64").length === KEY_BYTES)),
  accepts: `a ${KEY_BYTES}-byte key: 64 hex characters or its base64`,
  secret: true,
};

const GITHUB_REPO = String.raw`[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+`;
const GITHUB_PROJECTS = new RegExp(`^\\s*${GITHUB_REPO}\\s*=\\s*[a-z0-9][a-z0-9-]{0,49}\\s*(,\\s*${GITHUB_REPO}\\s*=\\s*[a-z0-9][a-z0-9-]{0,49}\\s*)*$`);

const SETTINGS = {
  DATABASE_URL: url(/^postgres(ql)?$/, "a postgres:// or postgresql:// URL"),
  WORK_GRAPH_DATA_DIR: { ...text("a directory path"), fallback: ".work-graph" },
  PORT: wholeNumber(0, 65_535, 3000),
  HOST: text("a host name or IP address (no spaces)", /^\S+$/),
  WORK_GRAPH_ADMIN_TOKEN: { ...text("a secret (at least 32 characters, checked at start)"), secret: true },
  WORK_GRAPH_MAX_BODY_BYTES: size(1024 * 1024),
  WORK_GRAPH_MAX_BATCH: wholeNumber(1, 1000, 20),
  // PostgreSQL's statement_timeout is a 32-bit count of milliseconds.
  WORK_GRAPH_STATEMENT_TIMEOUT_MS: wholeNumber(0, 2_147_483_647, 15_000),
  WORK_GRAPH_CONTINUITY_SECONDS: decimal({ from: 0 }, 30 * 86_400, 600),
  WORK_GRAPH_SWEEP_INTERVAL_MS: wholeNumber(50, 3_600_000, 1000),
  WORK_GRAPH_DB_POOL_SIZE: wholeNumber(1, 1000),
  WORK_GRAPH_DB_CONNECT_TIMEOUT_MS: wholeNumber(1, 3_600_000, 5000),
  WORK_GRAPH_IDEMPOTENCY_HOURS: decimal({ above: 0 }, 24 * 366, 24),
  WORK_GRAPH_DB_PORT: wholeNumber(0, 65_535),
  WORK_GRAPH_SHUTDOWN_GRACE_MS: wholeNumber(0, 3_600_000, 10_000),
  WORK_GRAPH_MAX_EXPIRIES: wholeNumber(0, 1000, 3),
  WORK_GRAPH_PUBLIC_URL: url(/^https?$/, "an http:// or https:// URL"),
  WORK_GRAPH_SECRET_KEY: secretKey,
  WORK_GRAPH_LOG_LEVEL: { schema: z.enum(LOG_LEVELS), accepts: `one of ${LOG_LEVELS.join(", ")}`, fallback: "info" } as Setting<(typeof LOG_LEVELS)[number]>,
  WORK_GRAPH_METRICS_CACHE_MS: wholeNumber(0, 3_600_000, 5000),
  WORK_GRAPH_OIDC_ISSUER: url(/^https?$/, "the identity provider's issuer URL (https://, or http:// on loopback)"),
  WORK_GRAPH_OIDC_CLIENT_ID: text("the client id registered at the identity provider"),
  WORK_GRAPH_OIDC_CLIENT_SECRET: { ...text("the client secret registered at the identity provider"), secret: true },
  WORK_GRAPH_OIDC_ROLE_CLAIM: { ...text("a claim name, e.g. groups or roles", /^[\w:./-]{1,200}$/), fallback: "groups" },
  WORK_GRAPH_OIDC_ADMIN_GROUPS: groupList,
  WORK_GRAPH_OIDC_OPERATOR_GROUPS: groupList,
  WORK_GRAPH_TOKEN_LOGIN: { schema: z.enum(["on", "off"]), accepts: "on or off", fallback: "on" } as Setting<"on" | "off">,
  WORK_GRAPH_DIRECT_DATABASE_URL: url(/^postgres(ql)?$/, "a postgres:// or postgresql:// URL"),
  WORK_GRAPH_DB_PREPARED_STATEMENTS: { schema: z.enum(PREPARED_STATEMENTS), accepts: `one of ${PREPARED_STATEMENTS.join(", ")}` } as Setting<
    (typeof PREPARED_STATEMENTS)[number]
  >,
  // Answering from Slack (server/integrations/slack): on when the first three are set.
  WORK_GRAPH_SLACK_BOT_TOKEN: { ...text("a Slack bot token (xoxb-…; no spaces)", /^\S+$/), secret: true },
  WORK_GRAPH_SLACK_SIGNING_SECRET: { ...text("the Slack app's signing secret (no spaces)", /^\S+$/), secret: true },
  WORK_GRAPH_SLACK_CHANNEL: text("a Slack channel id or name (no spaces)", /^\S+$/),
  WORK_GRAPH_SLACK_CHANNELS: text("project=channel pairs separated by commas, e.g. web=C0123,ops=C0456", /^\s*[^=,\s]+=[^=,\s]+(\s*,\s*[^=,\s]+=[^=,\s]+)*\s*$/),
  WORK_GRAPH_SLACK_API_URL: { ...url(/^https?$/, "an http:// or https:// URL"), fallback: "https://slack.com/api" },
  WORK_GRAPH_GITHUB_WEBHOOK_SECRET: { ...text("the secret of the GitHub webhook"), secret: true },
  WORK_GRAPH_GITHUB_LABEL: { ...text("a GitHub label name", /^[^,]{1,50}$/), fallback: "work-graph" },
  WORK_GRAPH_GITHUB_PROJECTS: text("owner/repo=project pairs separated by commas", GITHUB_PROJECTS),
  WORK_GRAPH_GITHUB_TOKEN: { ...text("a GitHub token"), secret: true },
  WORK_GRAPH_GITHUB_API_URL: { ...url(/^https?$/, "an http:// or https:// URL"), fallback: "https://api.github.com" },
} satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
type ValueOf<N extends SettingName> = (typeof SETTINGS)[N] extends Setting<infer T> ? T : never;

/** Every variable of the schema with its default (for the README check). */
export const SETTING_DEFAULTS: ReadonlyMap<SettingName, unknown> = new Map(
  Object.entries(SETTINGS).map(([name, setting]) => [name as SettingName, (setting as Setting<unknown>).fallback]),
);

class ConfigurationError extends Error {}

function parseSetting<N extends SettingName>(name: N, raw: string): ValueOf<N> {
  const setting = SETTINGS[name] as Setting<ValueOf<N>>;
  const result = setting.schema.safeParse(raw);
  if (result.success) return result.data;
  const shown = setting.secret ? ` (${raw.length} characters, not shown)` : `=${raw}`;
  throw new ConfigurationError(`${name}${shown}: expected ${setting.accepts}`);
}

const lastRead = new Map<SettingName, { raw: string | undefined; value: unknown }>();

/** The variable's value (an empty one counts as unset), parsed again only when its text changed. */
function read<N extends SettingName>(name: N): ValueOf<N> | undefined {
  const raw = process.env[name] || undefined;
  const last = lastRead.get(name);
  if (last && last.raw === raw) return last.value as ValueOf<N> | undefined;
  const value = raw === undefined ? undefined : parseSetting(name, raw);
  lastRead.set(name, { raw, value });
  return value;
}

function withDefault<N extends SettingName>(name: N): ValueOf<N> {
  return read(name) ?? (SETTINGS[name] as Setting<ValueOf<N>>).fallback!;
}

/** One message per variable set to a value it does not accept (empty: all valid). */
export function configurationProblems(): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    try {
      read(name);
    } catch (error) {
      if (!(error instanceof ConfigurationError)) throw error;
      problems.push(error.message);
    }
  }
  return problems;
}

/** The PostgreSQL to use; unset: `npm start` starts the embedded one (and sets it for this process). */
export const databaseUrl = () => read("DATABASE_URL");
/**
 * The direct connection (not through a transaction-mode pooler) for LISTEN and migrations;
 * unset: DATABASE_URL.
 */
export const directDatabaseUrl = () => read("WORK_GRAPH_DIRECT_DATABASE_URL") ?? databaseUrl();
/**
 * `named` only where statements stay on their connection (a direct connection, or a pooler
 * with protocol-level prepared statements); unset: `unnamed` (scripts/start.ts sets `named`
 * for the embedded database).
 */
export const preparedStatements = () => read("WORK_GRAPH_DB_PREPARED_STATEMENTS") ?? "unnamed";
/** Where the embedded PostgreSQL and the secret key file live, relative to the project root unless absolute. */
export const dataDir = () => withDefault("WORK_GRAPH_DATA_DIR");
export const port = () => withDefault("PORT");
/** Unset: every interface, IPv4 and IPv6. */
export const host = () => read("HOST");
export const adminTokenSetting = () => read("WORK_GRAPH_ADMIN_TOKEN");

/** Largest request body read, in bytes. Larger: 413 TOO_LARGE. */
export const maxBodyBytes = () => withDefault("WORK_GRAPH_MAX_BODY_BYTES");
/** Most calls in one `?batch=1` request. More: 413 TOO_LARGE. */
export const maxBatchCalls = () => withDefault("WORK_GRAPH_MAX_BATCH");

/**
 * Longest a single SQL statement of the API may run (0: no limit), so one slow request cannot
 * hold pool connections that others wait for.
 */
export const statementTimeoutMs = () => withDefault("WORK_GRAPH_STATEMENT_TIMEOUT_MS");

/**
 * Longest wait for a database connection: opening one, or getting a free one from the pool. A
 * database that accepts connections but never answers (a hung server, a network black hole)
 * then gives 503 UNAVAILABLE instead of requests that hang.
 */
export const databaseConnectTimeoutMs = () => withDefault("WORK_GRAPH_DB_CONNECT_TIMEOUT_MS");
/**
 * Default: 4 connections per core of this machine, from 8 to 20. More statements in flight
 * than the cores can run only add contention: on 2 cores a pool of 20 gave 64 agents 0.71–0.77×
 * the cycles of 16, a pool of 8 gave 0.97–1.02× (BENCHMARKS.md "Issue 31"). With the database on
 * a bigger machine, set it from that machine's cores.
 */
export const databasePoolSize = () => read("WORK_GRAPH_DB_POOL_SIZE") ?? Math.min(20, Math.max(8, 4 * availableParallelism()));
/** Port of the embedded PostgreSQL; unset or 0: chosen at first start, then kept. */
export const embeddedDatabasePort = () => read("WORK_GRAPH_DB_PORT") || undefined;

/** Rule 9 (continuity): how long the previous worker of an item is preferred after its last blocking request is resolved (0: off). */
export const continuitySeconds = () => withDefault("WORK_GRAPH_CONTINUITY_SECONDS");
export const sweepIntervalMs = () => withDefault("WORK_GRAPH_SWEEP_INTERVAL_MS");
/** How long an idempotency receipt is kept; a replay after that is a new call. */
export const idempotencyHours = () => withDefault("WORK_GRAPH_IDEMPOTENCY_HOURS");
/** Rule 11 (repeated expiry): the consecutive expiries after which an item goes to a person (0: off). */
export const maxConsecutiveExpiries = () => withDefault("WORK_GRAPH_MAX_EXPIRIES");
export const shutdownGraceMs = () => withDefault("WORK_GRAPH_SHUTDOWN_GRACE_MS");

/** Base of the dashboard links in webhook bodies. */
export function publicUrl(): string {
  return (read("WORK_GRAPH_PUBLIC_URL") ?? `http://localhost:${port()}`).replace(/\/+$/, "");
}

/** The webhook secrets' key as configured (server/integrations/webhooks/secret-box.ts decodes it); unset: the key file. */
export const secretKeySetting = () => read("WORK_GRAPH_SECRET_KEY");
export const logLevel = () => withDefault("WORK_GRAPH_LOG_LEVEL");
/** How long gauges of /api/metrics may serve a cached database read. */
export const metricsCacheMs = () => withDefault("WORK_GRAPH_METRICS_CACHE_MS");

/**
 * OpenID Connect sign-in (docs/people.md): on when the issuer, client id and secret are all
 * set. Groups: a member of an admin group is admin, else of an operator group operator (no
 * operator groups: everyone who signs in is an operator), else refused.
 */
export function oidcSettings() {
  const issuer = read("WORK_GRAPH_OIDC_ISSUER");
  const clientId = read("WORK_GRAPH_OIDC_CLIENT_ID");
  const clientSecret = read("WORK_GRAPH_OIDC_CLIENT_SECRET");
  if (issuer === undefined || clientId === undefined || clientSecret === undefined) return null;
  return {
    issuer,
    clientId,
    clientSecret,
    roleClaim: withDefault("WORK_GRAPH_OIDC_ROLE_CLAIM"),
    adminGroups: read("WORK_GRAPH_OIDC_ADMIN_GROUPS") ?? [],
    operatorGroups: read("WORK_GRAPH_OIDC_OPERATOR_GROUPS") ?? [],
  };
}

/** Whether operators and admins may still log in with a pasted token (off: sign-in only). */
export const tokenLoginEnabled = () => withDefault("WORK_GRAPH_TOKEN_LOGIN") === "on";

export interface SlackSettings {
  botToken: string;
  signingSecret: string;
  channel: string;
  /** Per-project channels (project id → channel); a project not listed uses `channel`. */
  channels: ReadonlyMap<string, string>;
  /** Base URL of Slack's Web API (a fake one in tests). */
  apiUrl: string;
}

/** The Slack app's settings when the bot token, signing secret and channel are all set; otherwise null (Slack is off). */
export function slackSettings(): SlackSettings | null {
  const botToken = read("WORK_GRAPH_SLACK_BOT_TOKEN");
  const signingSecret = read("WORK_GRAPH_SLACK_SIGNING_SECRET");
  const channel = read("WORK_GRAPH_SLACK_CHANNEL");
  if (!botToken || !signingSecret || !channel) return null;
  const apiUrl = withDefault("WORK_GRAPH_SLACK_API_URL");
  const channels = new Map((read("WORK_GRAPH_SLACK_CHANNELS") ?? "").split(",").filter((pair) => pair.includes("=")).map((pair) => {
    const [project, projectChannel] = pair.split("=").map((part) => part.trim());
    return [project!, projectChannel!] as const;
  }));
  return { botToken, signingSecret, channel, channels, apiUrl: apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/` };
}

/** GitHub issues in (server/integrations/github): on when the webhook secret is set. */
export function githubSettings() {
  const webhookSecret = read("WORK_GRAPH_GITHUB_WEBHOOK_SECRET");
  const projects = new Map<string, string>();
  for (const pair of (read("WORK_GRAPH_GITHUB_PROJECTS") ?? "").split(",").filter((entry) => entry.trim() !== "")) {
    const [repository, project] = pair.split("=").map((part) => part.trim());
    projects.set(repository!.toLowerCase(), project!);
  }
  return { webhookSecret, label: withDefault("WORK_GRAPH_GITHUB_LABEL"), projects };
}

/** GitHub progress out (server/integrations/github/progress.ts): on when the token is set. */
export function githubApiSettings(): { token: string; apiUrl: string } | null {
  const token = read("WORK_GRAPH_GITHUB_TOKEN");
  return token ? { token, apiUrl: withDefault("WORK_GRAPH_GITHUB_API_URL").replace(/\/+$/, "") } : null;
}
