// `postroom queue ...`: the operator's queue from a shell, as calls to a running node's
// operator API (API.md section 10). Pure: argv → the HTTP call to make (or a mistake
// named, with the usage), and an answer → the text to print. queue-client.ts makes the call.
import { parseArgs } from "node:util";

export const QUEUE_SUBCOMMANDS = ["list", "summary", "hold", "release", "retry", "cancel", "pause", "resume", "redeliver"] as const;
export type QueueSubcommand = (typeof QUEUE_SUBCOMMANDS)[number];

export const QUEUE_USAGE = `Usage: postroom queue <action> [options]

Steers the queue of a running node through its operator API; the operator token comes
from $POSTROOM_OPERATOR_TOKEN (a token whose hash is in dashboard.admin_tokens).

Actions:
  list                 recipients waiting: --destination, --outbound-account-id, --state, --limit
  summary              the queue by destination (queued, held, paused, oldest, last reply)
  hold                 never attempt the recipients a filter picks, until released
  release              deliver held recipients at once
  retry                make waiting recipients due now (held ones stay held)
  cancel               end waiting recipients, each with an error event
  pause <destination>  stop attempting a destination, on every node
  resume <destination> attempt a paused destination again
  redeliver            queue again what bounced: --bounce-class and --since (with optional filters)

A filter (hold, release, retry, cancel) needs at least one of:
  --destination D           a destination (the recipients' domain)
  --outbound-account-id ID  an outbound account (the SMTP username)
  --message-id ID           one message
  and may add --older-than DURATION (messages accepted at least that long ago: 30m, 2h, 3d)

Options:
  --url URL            the node (default: http.listen of the config file)
  -c, --config FILE    config file for the default --url ($POSTROOM_CONFIG, else ./postroom.toml)
  --json               print the API's answer as JSON
  -h, --help           show this help

Exit codes: 0 ok, 1 bad input or refused (4xx), 2 the node could not be reached or failed (5xx).
`;

export interface QueueCall {
  method: "GET" | "POST";
  /** Under /api/v0.1/operator, with its query string. */
  path: string;
  body?: Record<string, string>;
}

export type QueueCommand =
  | { kind: "help" }
  | { kind: "error"; message: string }
  | { kind: "call"; subcommand: QueueSubcommand; call: QueueCall; url: string | undefined; config: string | undefined; json: boolean };

const OPTIONS = {
  url: { type: "string" },
  config: { type: "string", short: "c" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  destination: { type: "string" },
  "outbound-account-id": { type: "string" },
  "message-id": { type: "string" },
  "older-than": { type: "string" },
  state: { type: "string" },
  limit: { type: "string" },
  "bounce-class": { type: "string" },
  since: { type: "string" },
} as const;

type Values = Record<string, string | boolean | undefined>;

/** The flags each action takes beyond --url, --config, --json and --help. */
const FLAGS: Record<QueueSubcommand, readonly string[]> = {
  list: ["destination", "outbound-account-id", "state", "limit"],
  summary: [],
  hold: ["destination", "outbound-account-id", "message-id", "older-than"],
  release: ["destination", "outbound-account-id", "message-id", "older-than"],
  retry: ["destination", "outbound-account-id", "message-id", "older-than"],
  cancel: ["destination", "outbound-account-id", "message-id", "older-than"],
  pause: [],
  resume: [],
  redeliver: ["bounce-class", "since", "destination", "outbound-account-id"],
};

/** The wire name of a flag (API.md section 10 spells them in snake case). */
const wire = (flag: string) => flag.replaceAll("-", "_");

function fields(values: Values, flags: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of flags) if (typeof values[f] === "string") out[wire(f)] = values[f] as string;
  return out;
}

export function parseQueueCommand(argv: string[]): QueueCommand {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }) as never;
  } catch (err) {
    const option = /'(-[^']*)'/.exec((err as Error).message)?.[1];
    return { kind: "error", message: option ? `unknown option or missing value: "${option}"` : (err as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help" };
  if (positionals.length === 0) return { kind: "error", message: `which action? one of ${QUEUE_SUBCOMMANDS.join(", ")}` };
  const sub = positionals[0] as QueueSubcommand;
  if (!QUEUE_SUBCOMMANDS.includes(sub)) return { kind: "error", message: `unknown action "${positionals[0]}"` };
  const given = Object.keys(values).filter((k) => !["url", "config", "json", "help"].includes(k) && values[k] !== undefined);
  const stray = given.find((k) => !FLAGS[sub].includes(k));
  if (stray) return { kind: "error", message: `${sub} takes no --${stray}` };
  const wantsDestination = sub === "pause" || sub === "resume";
  if (positionals.length !== (wantsDestination ? 2 : 1))
    return {
      kind: "error",
      message: wantsDestination
        ? `${sub} needs one destination, e.g. postroom queue ${sub} example.com`
        : `unexpected argument "${positionals[1]}"`,
    };
  const common = { url: values.url as string | undefined, config: values.config as string | undefined, json: values.json === true };
  const call = callOf(sub, values, positionals[1]);
  if ("message" in call) return { kind: "error", message: call.message };
  return { kind: "call", subcommand: sub, call, ...common };
}

function callOf(sub: QueueSubcommand, values: Values, destination: string | undefined): QueueCall | { message: string } {
  switch (sub) {
    case "list": {
      const query = new URLSearchParams(fields(values, FLAGS.list));
      return { method: "GET", path: `/queue${query.size > 0 ? `?${query}` : ""}` };
    }
    case "summary":
      return { method: "GET", path: "/queue/summary" };
    case "pause":
    case "resume":
      return { method: "POST", path: `/destinations/${encodeURIComponent(destination!)}/${sub}` };
    case "redeliver":
      if (values["bounce-class"] === undefined || values.since === undefined)
        return { message: "redeliver needs --bounce-class (e.g. block) and --since (e.g. 2026-11-27T09:00:00Z)" };
      return { method: "POST", path: "/queue/redeliver", body: fields(values, FLAGS.redeliver) };
    default: {
      const body = fields(values, FLAGS[sub]);
      if (body.destination === undefined && body.outbound_account_id === undefined && body.message_id === undefined)
        return { message: `${sub} needs a filter: --destination, --outbound-account-id or --message-id` };
      return { method: "POST", path: `/queue/${sub}`, body };
    }
  }
}

const cell = (v: unknown) => (v === null || v === undefined ? "-" : String(v));

function table(rows: Record<string, unknown>[], columns: string[]): string {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join("\n");
}

/** What a successful answer prints. */
export function formatAnswer(sub: QueueSubcommand, answer: unknown): string {
  if (sub === "list") {
    const rows = answer as Record<string, unknown>[];
    if (rows.length === 0) return "no recipient waiting";
    return table(rows, ["id", "message_id", "recipient", "destination", "state", "attempts", "next_attempt_at", "last_response"]);
  }
  if (sub === "summary") {
    const rows = answer as Record<string, unknown>[];
    if (rows.length === 0) return "the queue is empty";
    return table(rows, ["destination", "queued", "held", "paused", "oldest_at", "last_response"]);
  }
  if (sub === "pause" || sub === "resume") {
    const a = answer as { destination?: string; paused?: boolean };
    return `${a.destination}: ${a.paused ? "paused" : "not paused"}`;
  }
  const affected = (answer as { affected?: number }).affected ?? 0;
  return `${sub}: ${affected} recipient${affected === 1 ? "" : "s"}`;
}
