// argv → what postroom does: help, version, a command with its options, or an error
// naming the mistake with the usage to show.
import { describe, expect, test } from "bun:test";
import { COMMANDS, HELP, parseCommandLine, usageOf } from "../../src/cli/command-line.ts";

const usage = (name: string) => usageOf(COMMANDS.find((c) => c.name === name)!);

describe("parseCommandLine", () => {
  const cases: [string, string[], ReturnType<typeof parseCommandLine>][] = [
    ["no arguments: the help, exit 1", [], { kind: "help", text: HELP, exitCode: 1 }],
    ["--help", ["--help"], { kind: "help", text: HELP, exitCode: 0 }],
    ["help COMMAND", ["help", "init"], { kind: "help", text: usage("init"), exitCode: 0 }],
    ["--version", ["--version"], { kind: "version" }],
    ["-V", ["-V"], { kind: "version" }],
    ["COMMAND --help", ["serve", "--help"], { kind: "help", text: usage("serve"), exitCode: 0 }],
    ["COMMAND -h", ["check-config", "-h"], { kind: "help", text: usage("check-config"), exitCode: 0 }],
    ["tls status --help", ["tls", "status", "--help"], { kind: "help", text: usage("tls"), exitCode: 0 }],
    [
      "serve with --config",
      ["serve", "--config", "/etc/postroom/postroom.toml"],
      { kind: "run", command: "serve", config: "/etc/postroom/postroom.toml", force: false },
    ],
    ["init -c FILE -f", ["init", "-c", "x.toml", "-f"], { kind: "run", command: "init", config: "x.toml", force: true }],
    ["migrate", ["migrate"], { kind: "run", command: "migrate", config: undefined, force: false }],
    [
      "migrate --config FILE",
      ["migrate", "--config", "/etc/postroom/postroom.toml"],
      { kind: "run", command: "migrate", config: "/etc/postroom/postroom.toml", force: false },
    ],
    ["migrate --help", ["migrate", "--help"], { kind: "help", text: usage("migrate"), exitCode: 0 }],
    [
      "migrate with a stray argument",
      ["migrate", "now"],
      { kind: "error", message: 'migrate: unexpected argument "now"', usage: usage("migrate") },
    ],
    ["tls status", ["tls", "status"], { kind: "run", command: "tls", config: undefined, force: false }],
    ["an unknown command", ["frobnicate"], { kind: "error", message: 'unknown command "frobnicate"', usage: HELP }],
    ["an unknown option before any command", ["--frob"], { kind: "error", message: 'unknown option "--frob"', usage: HELP }],
    [
      "an unknown option names itself and the command",
      ["serve", "--bogus"],
      { kind: "error", message: 'serve: unknown option "--bogus"', usage: usage("serve") },
    ],
    [
      "an option another command has",
      ["serve", "--force"],
      { kind: "error", message: 'serve: unknown option "--force"', usage: usage("serve") },
    ],
    [
      "an option without its value",
      ["serve", "--config"],
      { kind: "error", message: 'serve: option "--config" needs a value', usage: usage("serve") },
    ],
    ["tls without status", ["tls"], { kind: "error", message: 'tls: needs "status"', usage: usage("tls") }],
    ["tls with another word", ["tls", "renew"], { kind: "error", message: 'tls: unexpected argument "renew"', usage: usage("tls") }],
    ["a stray argument", ["version", "x"], { kind: "error", message: 'version: unexpected argument "x"', usage: usage("version") }],
  ];
  for (const [name, argv, expected] of cases) test(name, () => expect(parseCommandLine(argv)).toEqual(expected));

  test("every command's usage lists its options and --help", () => {
    expect(usage("init")).toContain("--force");
    expect(usage("init")).toContain("--config FILE");
    expect(usage("secret")).not.toContain("--config");
    expect(usage("migrate")).toStartWith("Usage: postroom migrate [options]\n");
    expect(usage("migrate")).toContain("--config FILE");
    expect(HELP).toContain("  migrate        bring the store");
    for (const c of COMMANDS) expect(usageOf(c)).toContain("-h, --help");
  });
});
