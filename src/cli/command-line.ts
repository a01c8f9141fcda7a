// The command line's words: which commands exist, the options each takes, its usage text,
// and the pure decision "argv → what to do". main.ts carries the decision out.
import { parseArgs } from "node:util";
import { VERSION } from "../version.ts";
import { QUEUE_USAGE } from "./queue-command.ts";

type OptionName = "config" | "force";

interface CommandSpec {
  name: string;
  args?: string;
  summary: string;
  options: OptionName[];
}

const OPTIONS: Record<OptionName, { short: string; type: "string" | "boolean"; text: string }> = {
  config: { short: "c", type: "string", text: "-c, --config FILE   config file (default: $POSTROOM_CONFIG, else ./postroom.toml)" },
  force: { short: "f", type: "boolean", text: "-f, --force         overwrite an existing file" },
};

export const COMMANDS: CommandSpec[] = [
  { name: "serve", summary: "run the appliance", options: ["config"] },
  { name: "check-config", summary: "validate the config file and the files it names; list every problem", options: ["config"] },
  { name: "secret", summary: "mint a random token or SMTP password and print the line for the config", options: [] },
  { name: "init", summary: "write a starter config (mode 0640) with a fresh account and secrets", options: ["config", "force"] },
  {
    name: "migrate",
    summary: "bring the store (SQLite, or PostgreSQL with store.url) to this version's schema; print what it applied",
    options: ["config"],
  },
  { name: "tls", args: "status", summary: "print the certificate's names, issuer and expiry (exit 1 when unusable)", options: ["config"] },
  {
    name: "queue",
    args: "<action>",
    summary: "list, hold, release, retry, cancel, pause or redeliver mail in a running node's queue",
    options: ["config"],
  },
  { name: "version", summary: "print the version", options: [] },
];

const EXIT_CODES = "Exit codes: 0 ok, 1 bad config or input, 2 runtime failure.";

export const HELP = `postroom ${VERSION}: a self-hosted mail appliance

Usage: postroom <command> [options]
       postroom <command> --help

Commands:
${COMMANDS.map((c) => `  ${`${c.name}${c.args ? ` ${c.args}` : ""}`.padEnd(15)}${c.summary}`).join("\n")}

Options:
  -h, --help          show this help, or a command's with the command
  -V, --version       print the version

${EXIT_CODES}
`;

export function usageOf(spec: CommandSpec): string {
  const options = [...spec.options.map((o) => `  ${OPTIONS[o].text}`), "  -h, --help          show this help"];
  return `Usage: postroom ${spec.name}${spec.args ? ` ${spec.args}` : ""}${spec.options.length ? " [options]" : ""}\n\n${spec.summary}\n\nOptions:\n${options.join("\n")}\n\n${EXIT_CODES}\n`;
}

export type CommandLine =
  | { kind: "help"; text: string; exitCode: 0 | 1 }
  | { kind: "version" }
  | { kind: "run"; command: string; config: string | undefined; force: boolean }
  | { kind: "queue"; argv: string[] }
  | { kind: "error"; message: string; usage: string };

/** What the arguments ask for. Never throws: a mistake is an error naming it, with the usage to show. */
export function parseCommandLine(argv: string[]): CommandLine {
  const first = argv[0];
  if (first === undefined) return { kind: "help", text: HELP, exitCode: 1 };
  if (first === "-h" || first === "--help" || first === "help") {
    if (argv[1] === "queue") return { kind: "help", text: QUEUE_USAGE, exitCode: 0 };
    const spec = COMMANDS.find((c) => c.name === argv[1]);
    return { kind: "help", text: spec ? usageOf(spec) : HELP, exitCode: 0 };
  }
  if (first === "-V" || first === "--version") return { kind: "version" };
  // Its own actions and flags (queue-command.ts).
  if (first === "queue") return { kind: "queue", argv: argv.slice(1) };
  const spec = COMMANDS.find((c) => c.name === first);
  if (!spec)
    return { kind: "error", message: first.startsWith("-") ? `unknown option "${first}"` : `unknown command "${first}"`, usage: HELP };
  const usage = usageOf(spec);
  const options = Object.fromEntries(
    [...spec.options, "help" as const].map((o) => [
      o,
      o === "help" ? { type: "boolean" as const, short: "h" } : { type: OPTIONS[o].type, short: OPTIONS[o].short },
    ]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv.slice(1), options, allowPositionals: true, strict: true });
  } catch (err) {
    return { kind: "error", message: `${spec.name}: ${argumentProblem(err as Error & { code?: string })}`, usage };
  }
  if (parsed.values.help) return { kind: "help", text: usage, exitCode: 0 };
  const expected = spec.args ? [spec.args] : [];
  const extra = parsed.positionals.find((p, i) => p !== expected[i]);
  if (extra !== undefined || parsed.positionals.length !== expected.length) {
    const problem = extra !== undefined ? `unexpected argument "${extra}"` : `needs "${expected.join(" ")}"`;
    return { kind: "error", message: `${spec.name}: ${problem}`, usage };
  }
  return { kind: "run", command: spec.name, config: parsed.values.config as string | undefined, force: parsed.values.force === true };
}

// node:util's messages suggest "--" tricks that do not apply here; name the option plainly.
function argumentProblem(err: Error & { code?: string }): string {
  const option = /'(-[^']*)'/.exec(err.message)?.[1];
  switch (err.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option "${option ?? err.message}"`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      // "'-c, --config <value>' argument missing": name the long form.
      return option ? `option "${/--[\w-]+/.exec(option)?.[0] ?? option}" needs a value` : err.message;
    default:
      return err.message;
  }
}
