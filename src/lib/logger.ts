// JSON-lines logger. One object per line on stdout so journald and log shippers can
// parse it; never pass secrets in fields (callers mask them before logging).
import { writeSync } from "node:fs";
import { TurnBuffer } from "./turn-buffer.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;
/** Takes one line; `urgent` (warn and error) lines must not wait past the current turn. */
export type LogSink = (line: string, urgent?: boolean) => void;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/** Characters of log lines held before they are written at once rather than later. */
export const LOG_BATCH_MAX_CHARS = 64 * 1024;

/** How long debug and info lines may be held by default (config `log.flush_interval`). */
export const LOG_FLUSH_INTERVAL_MS = 100;

/**
 * Lines go out in one write, not one write each: debug and info lines after up to
 * `holdMs`, warn and error lines (with everything held before them, in order) at the end
 * of their event-loop turn (setImmediate), as nginx buffers its access log. The inbound
 * path logs a line per message, and under load a write per turn was still about a write
 * per message: 8 µs of the main thread's ~500 per message in bench:inbound's profile.
 * Whatever is held is written synchronously when the process exits, so an exit or a fatal
 * error loses no line; a kill -9 loses at most `holdMs` of routine lines (the records that
 * matter, mail and statuses, are in the store).
 */
export function batchedSink(
  write: (text: string) => void,
  writeAtExit: (text: string) => void = write,
  holdMs = 0,
): LogSink & { buffer: TurnBuffer } {
  const lines = new TurnBuffer(write, LOG_BATCH_MAX_CHARS, holdMs);
  process.once("exit", () => {
    const text = lines.take();
    if (text === "") return;
    try {
      writeAtExit(text);
    } catch {
      // stdout closed or full at exit: nothing else can take the lines.
    }
  });
  return Object.assign((line: string, urgent?: boolean) => lines.add(line + "\n", urgent), { buffer: lines });
}

// One sink for stdout, shared by every logger of the process, so that lines stay in order.
let stdoutShared: ReturnType<typeof batchedSink> | null = null;
const stdout = () =>
  (stdoutShared ??= batchedSink(
    (text) => process.stdout.write(text),
    (text) => writeSync(1, text),
    LOG_FLUSH_INTERVAL_MS,
  ));
const stdoutSink: LogSink = (line, urgent) => stdout()(line, urgent);

/** How long stdout's debug and info lines may be held (config `log.flush_interval`). */
export function setStdoutFlushInterval(ms: number): void {
  stdout().buffer.holdMs = ms;
}

export function createLogger(opts: { level?: LogLevel; sink?: LogSink; fields?: LogFields } = {}): Logger {
  const minRank = LEVEL_RANK[opts.level ?? "info"];
  const sink = opts.sink ?? stdoutSink;
  const base = opts.fields ?? {};
  const baseNeedsReplacer = needsReplacer(base);
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (LEVEL_RANK[level] < minRank) return;
    const line = { ts: new Date().toISOString(), level, msg, ...base, ...fields };
    // A replacer sends every value through a call; only lines holding objects need it.
    sink(
      baseNeedsReplacer || (fields !== undefined && needsReplacer(fields)) ? JSON.stringify(line, errorReplacer) : JSON.stringify(line),
      LEVEL_RANK[level] >= LEVEL_RANK.warn,
    );
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

/** Whether a value of `fields` is an object (maybe an Error, or holding one) or a bigint; null is neither. */
function needsReplacer(fields: LogFields): boolean {
  for (const key in fields) {
    const value = fields[key];
    const type = typeof value;
    if ((type === "object" && value !== null) || type === "bigint") return true;
  }
  return false;
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (typeof value === "bigint") return value.toString();
  return value;
}
