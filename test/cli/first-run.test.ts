// What a newcomer meets in the CLI: init says what to change, secret prints the line to
// paste, check-config suggests the key meant and names every missing TLS key at once.
// Each runs the real `postroom` in a child process.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { hashSecret } from "../../src/auth/secrets.ts";
import { testConfigToml } from "../helpers/fixtures.ts";
import { runCli } from "../helpers/process.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

describe("postroom init", () => {
  test("says what to change after writing, the empty sending_ips among it", async () => {
    const path = join(dir.path, "init.toml");
    const r = runCli(["init", "--config", path]);
    expect(r.code).toBe(0);
    const text = await Bun.file(path).text();
    // Production-safe: SMTP on every interface (where other servers reach it), no private targets.
    expect(text).toMatch(/^inbound_listen = "0\.0\.0\.0:\d+"$/m);
    expect(text).toMatch(/^submission_listen = "0\.0\.0\.0:\d+"$/m);
    expect(text).not.toMatch(/allow_private_targets\s*=\s*true/);
    expect(text).not.toMatch(/^rate_limit = "5\/min"/m);
    for (const key of [
      "hostname",
      "inbound.domain",
      "outbound.bounce_host",
      "outbound.sending_ips",
      "tls.mode",
      "data_dir",
      "smtp.inbound_listen",
    ])
      expect(r.stdout).toContain(key);
    expect(r.stdout).toMatch(/outbound\.sending_ips[^\n]*empty[^\n]*SPF/);
    expect(r.stdout).toContain("docs/operations.md");
    expect(r.stdout).toContain(`postroom check-config --config ${path}`);
  });
});

describe("postroom secret", () => {
  test("prints the token once and the lines to paste, each with the key it goes under", () => {
    const r = runCli(["secret"]);
    expect(r.code).toBe(0);
    const secret = /: (pr_[A-Za-z0-9_-]{43})\n/.exec(r.stdout)![1]!;
    expect(r.stdout.split(secret).length - 1).toBe(1);
    const hash = hashSecret(secret);
    expect(r.stdout).toContain(`api_tokens = ["${hash}"]`);
    expect(r.stdout).toContain("[[accounts]]");
    expect(r.stdout).toContain(`api_keys = ["${hash}"]`);
    expect(r.stdout).toContain("[[accounts.outbound]]");
    expect(r.stdout).toContain(`admin_tokens = ["${hash}"]`);
    expect(r.stdout).toContain(`metrics_token = "${hash}"`);
  });
});

describe("postroom check-config", () => {
  test("a misspelled key gets the key meant; a TLS mode's missing keys are all named with it", async () => {
    const path = join(dir.path, "typo.toml");
    await Bun.write(path, testConfigToml({ dataDir: join(dir.path, "data"), inboundKeys: 'target_timout = "30s"', tls: 'mode = "files"' }));
    const r = runCli(["check-config", "--config", path]);
    expect(r.code).toBe(1);
    const problems = r.stderr
      .split("\n")
      .slice(1)
      .filter(Boolean)
      .map((l) => l.trim())
      .sort();
    expect(problems).toEqual([
      'inbound.target_timout: unknown key; did you mean "target_timeout"?',
      'tls.cert_file: is required when tls.mode is "files"',
      'tls.key_file: is required when tls.mode is "files"',
    ]);
  });

  test("acme's missing keys are named at once", async () => {
    const path = join(dir.path, "acme.toml");
    await Bun.write(
      path,
      testConfigToml({ dataDir: join(dir.path, "data"), tls: 'mode = "acme"\n[tls.acme]\nchallenge_listen = ""\nemial = "x@y.z"' }),
    );
    const r = runCli(["check-config", "--config", path]);
    expect(r.code).toBe(1);
    const problems = r.stderr
      .split("\n")
      .slice(1)
      .filter(Boolean)
      .map((l) => l.trim())
      .sort();
    expect(problems).toEqual([
      'tls.acme.challenge_listen: is required when tls.mode is "acme"',
      'tls.acme.domains: needs at least one name when tls.mode is "acme"',
      'tls.acme.emial: unknown key; did you mean "email"?',
    ]);
  });
});
