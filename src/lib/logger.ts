// JSON-lines logger. One object per line on stdout so journald and log shippers can
// parse it; never pass secrets in fields (callers mask them before logging).
import { writeSync } from "node:fs";
import { TurnBuffer } from "./turn-buffer.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;
export type LogSink = (line: string) => void;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/** Characters of log lines held before they are written at once rather than at the end of the turn. */
export const LOG_BATCH_MAX_CHARS = 64 * 1024;

/**
 * Lines logged during one turn of the event loop go out in one write at its end
 * (setImmediate), not one write each: the inbound path logs a line per message, and a
 * write per line was a system call per message. Whatever is held is written
 * synchronously when the process exits, so an exit or a fatal error loses no line.
 */
export function batchedSink(write: (text: string) => void, writeAtExit: (text: string) => void = write): LogSink {
  const lines = new TurnBuffer(write, LOG_BATCH_MAX_CHARS);
  process.once("exit", () => {
    const text = lines.take();
    if (text === "") return;
    try {
      writeAtExit(text);
    } catch {
      // stdout closed or full at exit: nothing else can take the lines.
    }
  });
  return (line) => lines.add(line + "\n");
}

let stdoutSinkShared: LogSink | null = null;
const stdoutSink: LogSink = (line) =>
  (stdoutSinkShared ??= batchedSink(
    (text) => process.stdout.write(text),
    (text) => writeSync(1, text),
  ))(line);

export function createLogger(opts: { level?: LogLevel; sink?: LogSink; fields?: LogFields } = {}): Logger {
  const minRank = LEVEL_RANK[opts.level ?? "info"];
  const sink = opts.sink ?? stdoutSink;
  const base = opts.fields ?? {};
  const baseNeedsReplacer = needsReplacer(base);
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (LEVEL_RANK[level] < minRank) return;
    const line = { ts: new Date().toISOString(), level, msg, ...base, ...fields };
    // A replacer sends every value through a call; only lines holding objects need it.
    sink(baseNeedsReplacer || (fields !== undefined && needsReplacer(fields)) ? JSON.stringify(line, errorReplacer) : JSON.stringify(line));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger({ level: opts.level, sink, fields: { ...base, ...fields } }),
  };
}

/** A logger that drops everything; for tests that do not read logs. */
export const silentLogger: Logger = createLogger({ sink: () => {} });

/** Whether a value of `fields` is an object (maybe an Error, or holding one) or a bigint. */
function needsReplacer(fields: LogFields): boolean {
  for (const key in fields) {
    const type = typeof fields[key];
    if (type === "object" || type === "bigint") return true;
  }
  return false;
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (typeof value === "bigint") return value.toString();
  return value;
}
