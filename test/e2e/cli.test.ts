// The command line as an operator uses it.
import { afterAll, describe, expect, test } from "bun:test";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { hashSecret } from "../../src/auth/secrets.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { testConfigToml } from "../helpers/fixtures.ts";
import { runCli, ServeProcess } from "../helpers/process.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

describe("postroom CLI", () => {
  test("version and help", () => {
    expect(runCli(["version"]).stdout).toMatch(/^postroom \d+\.\d+\.\d+\n$/);
    const help = runCli(["--help"]);
    expect(help.code).toBe(0);
    for (const cmd of ["serve", "check-config", "secret", "init", "tls status", "version"]) expect(help.stdout).toContain(cmd);
    expect(runCli([]).code).toBe(1);
  });

  test("--version, and COMMAND --help prints that command's usage", () => {
    expect(runCli(["--version"])).toEqual({ code: 0, stdout: runCli(["version"]).stdout, stderr: "" });
    const help = runCli(["init", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toStartWith("Usage: postroom init [options]\n");
    expect(help.stdout).toContain("-f, --force");
  });

  test("an unknown option names itself and prints the command's usage", () => {
    const r = runCli(["check-config", "--confg", "x.toml"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith('check-config: unknown option "--confg"\n\nUsage: postroom check-config [options]\n');
  });

  test("an unknown command or option is exit 1 with the help", () => {
    const r = runCli(["frobnicate"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unknown command "frobnicate"');
    expect(runCli(["serve", "--bogus"]).code).toBe(1);
  });

  test("tls status prints the names, issuer, serial and expiry; a key of another certificate is exit 1 with the reason", async () => {
    const good = makeSelfSignedCert(dir.path, "mx.postroom.test", "status", 10);
    const other = makeSelfSignedCert(dir.path, "mx.postroom.test", "other");
    const path = join(dir.path, "tls.toml");
    const serial = new (await import("node:crypto")).X509Certificate(await Bun.file(good.certFile).text()).serialNumber;
    await Bun.write(
      path,
      testConfigToml({
        dataDir: join(dir.path, "data"),
        tls: `mode = "files"\ncert_file = "${good.certFile}"\nkey_file = "${good.keyFile}"`,
      }),
    );
    const ok = runCli(["tls", "status", "--config", path]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      new RegExp(
        `^mode:    files\nsource:  ${good.certFile} \\(key ${good.keyFile}\\)\nnames:   mx\\.postroom\\.test\nissuer:  mx\\.postroom\\.test\nserial:  ${serial}\n` +
          `valid:   \\S+ to \\S+ \\(9 days left\\)\nwarning: expires within 14 days\n$`,
      ),
    );
    await Bun.write(
      path,
      testConfigToml({
        dataDir: join(dir.path, "data"),
        tls: `mode = "files"\ncert_file = "${good.certFile}"\nkey_file = "${other.keyFile}"`,
      }),
    );
    const bad = runCli(["tls", "status", "--config", path]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("problem: the key does not match the certificate");
  });

  test("secret prints a token once and the line for the config", () => {
    const r = runCli(["secret"]);
    expect(r.code).toBe(0);
    const secret = /: (pr_[A-Za-z0-9_-]{43})\n/.exec(r.stdout)![1]!;
    expect(r.stdout).toContain(`"${hashSecret(secret)}"`);
  });

  test("check-config lists every problem with its key path and exits 1", async () => {
    const path = join(dir.path, "bad.toml");
    await Bun.write(path, `[http]\nlisten = "nope"\n[[accounts]]\nid = "XYZ"\n`);
    const r = runCli(["check-config", "--config", path]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `${path}: 2 problems:\n  http.listen: must be "host:port" with a port from 0 to 65535 (e.g. "0.0.0.0:25", "[::]:25"), or "" for off\n  accounts[0].id: must be 16 lowercase hex\n`,
    );
    expect(runCli(["check-config", "--config", join(dir.path, "missing.toml")]).stderr).toContain("no such file");
  });

  test("check-config lists an impossible port, a misspelled key, a bad duration and a missing certificate file together", async () => {
    const path = join(dir.path, "four.toml");
    const certFile = join(dir.path, "no-such-cert.pem");
    const keyFile = join(dir.path, "no-such-key.pem");
    await Bun.write(
      path,
      testConfigToml({
        dataDir: join(dir.path, "data"),
        inboundKeys: 'target_timout = "30s"\ntarget_timeout = "soon"',
        tls: `mode = "files"\ncert_file = "${certFile}"\nkey_file = "${keyFile}"`,
      }).replace('listen = "127.0.0.1:0"', 'listen = "127.0.0.1:99999"'),
    );
    const r = runCli(["check-config", "--config", path]);
    expect(r.code).toBe(1);
    const problems = r.stderr
      .split("\n")
      .slice(1)
      .filter(Boolean)
      .map((l) => l.trim())
      .sort();
    expect(problems).toEqual(
      [
        'http.listen: must be "host:port" with a port from 0 to 65535 (e.g. "0.0.0.0:25", "[::]:25"), or "" for off',
        'inbound.target_timout: unknown key; did you mean "target_timeout"?',
        'inbound.target_timeout: must be a duration such as "30s", "5m", "2h" or "5d"',
        `tls.cert_file: ${certFile}: no such file`,
        `tls.key_file: ${keyFile}: no such file`,
      ].sort(),
    );
    expect(r.stderr.split("\n")[0]).toBe(`${path}: 5 problems:`);
  });

  test("an impossible listen port is refused by serve, never a listener silently left out", async () => {
    const path = join(dir.path, "port.toml");
    await Bun.write(
      path,
      testConfigToml({ dataDir: join(dir.path, "data"), inbound: true }).replace(
        'inbound_listen = "127.0.0.1:0"',
        'inbound_listen = "127.0.0.1:70000"',
      ),
    );
    const r = runCli(["serve", "--config", path]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('smtp.inbound_listen: must be "host:port" with a port from 0 to 65535');
  });

  test("serve with a bad config exits 1 before listening", async () => {
    const path = join(dir.path, "bad-serve.toml");
    await Bun.write(path, `hostname = 5\n`);
    const r = runCli(["serve", "--config", path]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("hostname: must be a host name such as mx.example.com");
  });

  test("POSTROOM_CONFIG names the file when --config is not given", async () => {
    const example = new URL("../../config.example.toml", import.meta.url).pathname;
    const r = runCli(["check-config"], { env: { POSTROOM_CONFIG: example } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${example}: ok (1 account)\n`);
  });

  test("init writes a working config with fresh secrets, and never overwrites without --force", async () => {
    const path = join(dir.path, "init.toml");
    const r = runCli(["init", "--config", path]);
    expect(r.code).toBe(0);
    const token = /API token:\s+(pr_\S+)/.exec(r.stdout)![1]!;
    const accountId = /account ID:\s+([0-9a-f]{16})/.exec(r.stdout)![1]!;
    const checked = runCli(["check-config", "--config", path]);
    expect(checked.code).toBe(0);
    // init cannot know the host's public addresses: check-config says so, without failing.
    expect(checked.stderr).toStartWith("warning: outbound.sending_ips: is empty, so no SPF record is offered");
    expect(checked.stdout).toBe(`${path}: ok (1 account, 1 warning)\n`);
    expect((await stat(path)).mode & 0o777).toBe(0o640);
    const text = await Bun.file(path).text();
    expect(text).not.toContain(token);
    expect(text).toContain(hashSecret(token));

    expect(runCli(["init", "--config", path]).code).toBe(1);
    expect(await Bun.file(path).text()).toBe(text);

    // The written config serves, and the printed token works.
    await Bun.write(
      path,
      text.replace('listen = "127.0.0.1:8080"', 'listen = "127.0.0.1:0"').replace(/_listen = "0\.0\.0\.0:\d+"/g, '_listen = ""'),
    );
    const p = ServeProcess.spawn(path, dir.path);
    const port = await p.httpPort();
    const res = await fetch(`http://127.0.0.1:${port}/api/v0.1/${accountId}/addresses`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    p.signal("SIGTERM");
    expect(await p.exited()).toBe(0);

    expect(runCli(["init", "--config", path, "--force"]).code).toBe(0);
    expect(await Bun.file(path).text()).not.toBe(text);
  });
});
