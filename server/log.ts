import pino, { type Logger } from "pino";
import pretty from "pino-pretty";
import { logLevel } from "./config";

/**
 * The server's structured log (pino): JSON lines, or human-readable when stdout is a terminal.
 * Level from WORK_GRAPH_LOG_LEVEL (trace, debug, info, warn, error, fatal, silent; default info).
 * Nothing logs request headers or bodies; the redaction below is a second guard should a
 * token ever reach a log call.
 */
function createLogger(level: string): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: "work-graph" },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ["token", "*.token", "authorization", "*.authorization", "cookie", "*.cookie"], censor: "[redacted]" },
  };
  // Written through process.stdout (not a raw fd) so whatever captures the process's output sees each line.
  return process.stdout.isTTY ? pino(options, pretty({ sync: true, colorize: true })) : pino(options, process.stdout);
}

// The process's one stdout, so one logger (the instance keeps it as `log`), made when first used: the level is read then.
let processLogger: Logger | undefined;
let lifecycle: Logger | undefined;

export function logger(): Logger {
  return (processLogger ??= createLogger(logLevel()));
}

/**
 * The server's lifecycle lines (starting, the database's supervision, the admin token, stopping):
 * written at info whatever WORK_GRAPH_LOG_LEVEL says, because an operator always needs them.
 */
export function lifecycleLogger(): Logger {
  const base = logger();
  return (lifecycle ??= base.isLevelEnabled("info") ? base : base.child({}, { level: "info" }));
}

/** For the message that the configuration is invalid, which must reach the log even when the log level is what is invalid. */
export function configurationErrorLogger(): Logger {
  return createLogger("info");
}
