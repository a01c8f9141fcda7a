// Tests that need a tool from Debian (swaks, pebble, python3-dkim, promtool, chromium, golang-go, ruby-rack, postgresql, unbound). In CI (CI=true) a
// missing tool fails the run: the check throws when this file's caller loads. Elsewhere
// each test that needs it is skipped where everyone sees it, its name saying what is
// missing. Never a `return` inside a test, which would report a test that did not run as
// passed.
import { test } from "bun:test";
import { dkimpyAvailable } from "./dkimpy.ts";
import { goAvailable } from "./go-client.ts";
import { rackAvailable } from "./griddler.ts";
import { pebbleAvailable } from "./pebble.ts";
import { postgresAvailable } from "./postgres.ts";
import { swaksAvailable } from "./smtp.ts";
import { chromiumAvailable } from "./browser.ts";
import { spamdAvailable } from "./spamd.ts";

/** promtool, from Debian's prometheus package: checks /metrics text and alert rules. */
export function promtoolAvailable(): boolean {
  const found = Bun.which("promtool") !== null;
  if (!found && process.env.CI === "true") throw new Error("promtool is required in CI (.ci/run installs the prometheus package)");
  return found;
}

/** unbound, Debian's DNS server: bench:inbound's loopback DNS (bench/unbound.ts). */
export function unboundAvailable(): boolean {
  const found = Bun.which("unbound", { PATH: `${process.env.PATH}:/usr/sbin` }) !== null;
  if (!found && process.env.CI === "true") throw new Error("unbound is required in CI (.ci/run installs it)");
  return found;
}

const CHECKS = {
  swaks: swaksAvailable,
  pebble: pebbleAvailable,
  "python3-dkim": dkimpyAvailable,
  promtool: promtoolAvailable,
  chromium: chromiumAvailable,
  spamd: spamdAvailable,
  "golang-go": goAvailable,
  "ruby-rack": rackAvailable,
  postgresql: postgresAvailable,
  unbound: unboundAvailable,
} as const;
export type Tool = keyof typeof CHECKS;

type TestBody = () => void | Promise<unknown>;

/**
 * `test` for tests that need `tools`: the test itself when they are installed; when one is
 * missing (outside CI), the test skipped, with "[skipped: ... not installed]" in its name.
 */
export function requireTools(...tools: Tool[]): (name: string, fn: TestBody, timeoutMs?: number) => void {
  const missing = tools.filter((tool) => !CHECKS[tool]());
  if (missing.length === 0) return (name, fn, timeoutMs) => test(name, fn, timeoutMs);
  const why = `[skipped: ${missing.join(", ")} not installed; .ci/run installs ${missing.length > 1 ? "them" : "it"}]`;
  return (name, fn) => test.skip(`${name} ${why}`, fn);
}
