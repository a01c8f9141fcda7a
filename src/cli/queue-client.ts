// Runs `postroom queue ...` (queue-command.ts) against a running node: finds the node
// (--url, else the config's http.listen), takes the operator token from
// $POSTROOM_OPERATOR_TOKEN, makes the call and says what came back. Exit codes: 0 ok,
// 1 bad input or refused (4xx), 2 the node unreachable or failing (5xx).
import type { Config } from "../config/config.ts";
import { formatAnswer, type QueueCommand, QUEUE_USAGE } from "./queue-command.ts";

export const OPERATOR_TOKEN_ENV = "POSTROOM_OPERATOR_TOKEN";
/** How long the CLI waits for the node's answer. */
export const QUEUE_CALL_TIMEOUT_MS = 30_000;

export interface QueueOutcome {
  exitCode: 0 | 1 | 2;
  stdout: string[];
  stderr: string[];
}

const failed = (exitCode: 1 | 2, ...stderr: string[]): QueueOutcome => ({ exitCode, stdout: [], stderr });

/** The node's base URL from its config: http.listen, on loopback when it listens on every address. */
export function urlFromConfig(config: Config): string | null {
  const listen = config.http.listen;
  if (!listen) return null;
  const any = listen.host === "" || listen.host === "0.0.0.0" || listen.host === "::" || listen.host === "[::]";
  const host = any ? "127.0.0.1" : listen.host.includes(":") && !listen.host.startsWith("[") ? `[${listen.host}]` : listen.host;
  return `${config.http.tls ? "https" : "http"}://${host}:${listen.port}`;
}

export async function runQueueCommand(
  command: QueueCommand,
  env: Record<string, string | undefined>,
  /** Loads the config for the default --url; a message when it cannot. */
  loadConfig: (path: string | undefined) => Promise<Config | string>,
): Promise<QueueOutcome> {
  if (command.kind === "help") return { exitCode: 0, stdout: [QUEUE_USAGE], stderr: [] };
  if (command.kind === "error") return failed(1, `queue: ${command.message}`, "", QUEUE_USAGE);
  const token = env[OPERATOR_TOKEN_ENV];
  if (!token) return failed(1, `queue: set ${OPERATOR_TOKEN_ENV} to an operator token (one whose hash is in dashboard.admin_tokens)`);
  let base = command.url;
  if (base === undefined) {
    const config = await loadConfig(command.config);
    if (typeof config === "string") return failed(1, `queue: ${config}; or name the node with --url`);
    const url = urlFromConfig(config);
    if (!url) return failed(1, "queue: http.listen is off in the config; name the node with --url");
    base = url;
  }
  if (!/^https?:\/\/[^/]+/.test(base)) return failed(1, `queue: --url must be http://host:port or https://host:port, not "${base}"`);
  const url = `${base.replace(/\/+$/, "")}/api/v0.1/operator${command.call.path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: command.call.method,
      headers: { Authorization: `Bearer ${token}`, ...(command.call.body ? { "Content-Type": "application/json" } : {}) },
      body: command.call.body ? JSON.stringify(command.call.body) : undefined,
      signal: AbortSignal.timeout(QUEUE_CALL_TIMEOUT_MS),
    });
  } catch (err) {
    return failed(2, `queue: cannot reach ${base}: ${(err as Error).message}`);
  }
  const text = await res.text();
  let answer: unknown = null;
  try {
    answer = text ? JSON.parse(text) : null;
  } catch {
    return failed(2, `queue: ${base} answered ${res.status} with something other than JSON; is it a Postroom node?`);
  }
  if (!res.ok) {
    const error = (answer as { error?: string } | null)?.error ?? `HTTP ${res.status}`;
    return failed(res.status >= 500 ? 2 : 1, `queue ${command.subcommand}: ${res.status} ${error}`);
  }
  return { exitCode: 0, stdout: [command.json ? JSON.stringify(answer, null, 2) : formatAnswer(command.subcommand, answer)], stderr: [] };
}
