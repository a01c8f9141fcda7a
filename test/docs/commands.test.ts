// The commands of the docs run against the example config as written: every command that
// talks to this machine uses the example config's ports (or the quickstart's target, 8000)
// and the example's credentials, never a placeholder such as `<token>`. Commands for a
// production host (mx.example.com, sudo, systemctl) are left alone.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { parse as parseToml } from "smol-toml";

const ROOT = new URL("../../", import.meta.url);
const example = parseToml(readFileSync(new URL("config.example.toml", ROOT), "utf8")) as {
  http: { listen: string };
  smtp: { inbound_listen: string; submission_listen: string };
};
const portOf = (listen: string) => listen.split(":").pop()!;
/** The quickstart's tiny target listens on 8000; the docs' examples post to it. */
const TARGET_PORT = "8000";
const PORTS = new Set([
  portOf(example.http.listen),
  portOf(example.smtp.inbound_listen),
  portOf(example.smtp.submission_listen),
  TARGET_PORT,
]);

const pages = [
  "README.md",
  ...readdirSync(new URL("docs/", ROOT))
    .filter((n) => n.endsWith(".md"))
    .map((n) => `docs/${n}`),
];

/** Every shell command block of a page that reaches this machine (127.0.0.1 or localhost). */
function localCommands(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:sh|bash)[^\n]*\n([\s\S]*?)^```$/gm)]
    .map((m) => m[1]!)
    .filter((c) => /127\.0\.0\.1|localhost/.test(c));
}

describe("the docs' commands fit the example config", () => {
  test.each(pages)("%s", (page) => {
    const problems: string[] = [];
    for (const command of localCommands(readFileSync(new URL(page, ROOT), "utf8"))) {
      for (const [, port] of command.matchAll(/(?:127\.0\.0\.1|localhost):(\d+)/g))
        if (!PORTS.has(port!)) problems.push(`port ${port} is not one of the example config's (${[...PORTS].join(", ")}): ${command}`);
      for (const [placeholder] of command.matchAll(/<[A-Za-z][A-Za-z ]*>/g))
        problems.push(`${placeholder} is a placeholder; use the example's credentials: ${command}`);
    }
    expect(problems).toEqual([]);
  });
});
