// Postroom in the shape a VPS runs it: the compiled binary installed by the README's
// service steps, started as the unit starts it (an unprivileged uid and gid, no other
// groups, WorkingDirectory in its state directory), every listener on a fixed port,
// certificates from files copied by the certbot deploy hook, or from an ACME CA (pebble).
// Port 0 and root hid defects here before: a listener started twice, a config the service
// user could not read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "smol-toml";
import { ENGINE_OPTIONS } from "../../src/engine-options.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { freePort, pebbleAvailable, startPebble, type Pebble } from "../helpers/pebble.ts";
import { ServeProcess } from "../helpers/process.ts";
import { asServiceUser, installAsReadmeSays, unitCommand, type InstalledService } from "../helpers/service-install.ts";
import { runSwaks, swaksAvailable } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const NAME = "mx.postroom.test";
const hasTools = swaksAvailable() && pebbleAvailable() && Bun.which("setpriv") !== null && process.getuid?.() === 0;
if (!hasTools && process.env.CI === "true") throw new Error("CI runs as root with swaks, pebble and setpriv (.ci/run installs them)");
// A uid and gid no account has, as a fresh system user's would be.
const SERVICE_ID = 61_000 + Math.floor(Math.random() * 1000);

interface Ports {
  http: number;
  inbound: number;
  submission: number;
  submissionTls: number;
}

async function fixedPorts(): Promise<Ports> {
  return { http: await freePort(), inbound: await freePort(), submission: await freePort(), submissionTls: await freePort() };
}

/** The operator's edit after `postroom init`: host names, state directory, fixed ports, TLS. */
async function editConfig(path: string, stateDir: string, ports: Ports, tls: Record<string, unknown>): Promise<void> {
  const config = parse(await Bun.file(path).text()) as Record<string, any>;
  config.hostname = NAME;
  config.data_dir = stateDir;
  config.log = { level: "info" };
  config.http = { ...config.http, listen: `127.0.0.1:${ports.http}`, public_url: `http://127.0.0.1:${ports.http}` };
  config.smtp = {
    inbound_listen: `127.0.0.1:${ports.inbound}`,
    submission_listen: `127.0.0.1:${ports.submission}`,
    submission_tls_listen: `127.0.0.1:${ports.submissionTls}`,
  };
  config.inbound = { ...config.inbound, domain: "in.postroom.test", allow_private_targets: true };
  config.outbound = { ...config.outbound, sending_ips: ["192.0.2.25"] };
  config.tls = tls;
  // writeFileSync on the existing file keeps its owner, group and mode, as an editor saving in place does.
  await Bun.write(path, stringify(config));
}

function secretsOf(initOutput: string) {
  const field = (label: string) => new RegExp(`${label}:\\s+(\\S+)`).exec(initOutput)![1]!;
  return {
    accountId: field("account ID"),
    apiToken: field("API token"),
    smtpUser: field("SMTP username"),
    smtpPassword: field("SMTP password"),
  };
}

/** /healthz's status once it answers 200 or the time is up; the server's log when it never answers. */
async function healthz(port: number, server: ServeProcess): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.status === 200 || Date.now() > deadline) return res.status;
    } catch (_err) {
      if (Date.now() > deadline || server.proc.exitCode !== null) {
        await server.exited();
        throw new Error(
          `no answer on ${port} (exit ${server.proc.exitCode}):\n${server.lines.map((l) => JSON.stringify(l)).join("\n")}\n${server.stderr}`,
        );
      }
    }
    await Bun.sleep(100);
  }
}

/** swaks as an operator would try each port: the banner, TLS, and AUTH PLAIN with the SMTP credentials. */
async function expectTlsAuth(port: number, tlsFlag: "--tls" | "--tlsc", user: string, password: string): Promise<void> {
  const r = await runSwaks([
    "--server",
    `127.0.0.1:${port}`,
    tlsFlag,
    "--auth",
    "PLAIN",
    "--auth-user",
    user,
    "--auth-password",
    password,
    "--quit-after",
    "AUTH",
    "--timeout",
    "10",
  ]);
  expect(r.transcript).toMatch(/<[~-] {2}220 mx\.postroom\.test/);
  expect(r.transcript).toMatch(/TLS started with cipher/);
  expect(r.transcript).toMatch(/<~ {2}235 /);
  expect(r.code).toBe(0);
}

describe.if(hasTools)("the README's service steps as an unprivileged user, certificate files, fixed ports", () => {
  let service: InstalledService;
  let server: ServeProcess;
  let target: TestTarget;
  const ports: Ports = { http: 0, inbound: 0, submission: 0, submissionTls: 0 };
  const lineage = tempDir("postroom-letsencrypt-");

  beforeAll(async () => {
    Object.assign(ports, await fixedPorts());
    target = TestTarget.start();
    // certbot's live directory: root only.
    const made = makeSelfSignedCert(lineage.path, NAME);
    copyFileSync(made.certFile, join(lineage.path, "fullchain.pem"));
    copyFileSync(made.keyFile, join(lineage.path, "privkey.pem"));
    chmodSync(lineage.path, 0o700);
    service = await installAsReadmeSays(SERVICE_ID, SERVICE_ID, async (configPath, root) => {
      const hook = service0Hook(root);
      if (hook.code !== 0) throw new Error(`certbot deploy hook failed: ${hook.output}`);
      await editConfig(configPath, join(root, "var/lib/postroom"), ports, {
        mode: "files",
        cert_file: join(root, "etc/postroom/tls/fullchain.pem"),
        key_file: join(root, "etc/postroom/tls/privkey.pem"),
      });
    });
    server = ServeProcess.run(unitCommand(service, "ExecStart"), service.stateDir);
  }, 60_000);

  // The deploy hook as certbot runs it (root, RENEWED_LINEAGE set), into the root's /etc/postroom/tls.
  function service0Hook(root: string) {
    const r = Bun.spawnSync(["systemd/certbot-deploy-hook"], {
      cwd: new URL("../..", import.meta.url).pathname,
      env: {
        ...process.env,
        RENEWED_LINEAGE: lineage.path,
        POSTROOM_TLS_DIR: join(root, "etc/postroom/tls"),
        POSTROOM_GROUP: String(SERVICE_ID),
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    return { code: r.exitCode, output: r.stdout.toString() + r.stderr.toString() };
  }

  afterAll(async () => {
    server?.signal("SIGTERM");
    await server?.exited();
    await target?.stop();
    service?.remove();
    lineage.remove();
  });

  test("the unit's ExecStartPre (check-config) passes as the service user", () => {
    const r = Bun.spawnSync(unitCommand(service, "ExecStartPre"), { stdout: "pipe", stderr: "pipe" });
    expect(r.stderr.toString()).toBe("");
    expect(r.exitCode).toBe(0);
  });

  test("the binary starts as the service user: /healthz answers 200 on its fixed port, and it still runs", async () => {
    expect(await healthz(ports.http, server)).toBe(200);
    // Logged once every listener is up: a listener that failed to start would have failed
    // (and been logged) before it.
    await server.waitFor((l) => l.msg === "postroom started");
    expect(server.proc.exitCode).toBeNull();
    expect(server.lines.filter((l) => l.level === "error")).toEqual([]);
  }, 40_000);

  test("as the service user, serve executed itself again in place with the engine's options (src/engine-options.ts)", async () => {
    expect(await healthz(ports.http, server)).toBe(200);
    // The PID the unit's command started (setpriv, then the binary, then the binary again).
    const environ = readFileSync(`/proc/${server.proc.pid}/environ`, "latin1").split("\0");
    for (const [name, value] of Object.entries(ENGINE_OPTIONS)) expect(environ).toContain(`${name}=${value}`);
  }, 40_000);

  test("implicit TLS with certificate files on a fixed port starts once (no EADDRINUSE)", async () => {
    await healthz(ports.http, server);
    const implicit = server.lines.filter((l) => l.msg === "submission smtp listening" && l.tls === "implicit");
    expect(implicit.map((l) => l.port)).toEqual([ports.submissionTls]);
    expect(JSON.stringify(server.lines)).not.toContain("EADDRINUSE");
  });

  test("STARTTLS on the inbound and submission ports and implicit TLS greet with 220 and accept AUTH PLAIN from swaks", async () => {
    await healthz(ports.http, server);
    const { smtpUser, smtpPassword } = secretsOf(service.initOutput);
    await expectTlsAuth(ports.submission, "--tls", smtpUser, smtpPassword);
    await expectTlsAuth(ports.submissionTls, "--tlsc", smtpUser, smtpPassword);
    // Port 25 takes mail for addresses (no AUTH there): a message over STARTTLS reaches its target.
    const { accountId, apiToken } = secretsOf(service.initOutput);
    const created = await fetch(`http://127.0.0.1:${ports.http}/api/v0.1/${accountId}/addresses`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiToken}`, "content-type": "application/json" },
      body: JSON.stringify({ target: target.url("/prod"), target_format: "json+n" }),
    });
    expect(created.status).toBe(201);
    const { email } = (await created.json()) as { email: string };
    const r = await runSwaks([
      "--server",
      `127.0.0.1:${ports.inbound}`,
      "--tls",
      "--from",
      "alice@sender.test",
      "--to",
      email,
      "--header",
      "Subject: over STARTTLS",
      "--timeout",
      "15",
    ]);
    expect(r.transcript).toMatch(/<- {2}220 mx\.postroom\.test/);
    expect(r.transcript).toMatch(/<~ {2}250 /);
    expect(r.code).toBe(0);
    expect(target.at("/prod").map((m) => m.json.headers.subject)).toEqual(["over STARTTLS"]);
  }, 40_000);

  test("a config the service user cannot read is 'permission denied', not 'no such file'", () => {
    const check = unitCommand(service, "ExecStartPre");
    chmodSync(service.configPath, 0o600);
    try {
      const r = Bun.spawnSync(check, { stdout: "pipe", stderr: "pipe" });
      expect(r.exitCode).toBe(1);
      expect(r.stderr.toString()).toContain(
        `${service.configPath}: 1 problem:\n  permission denied for uid ${SERVICE_ID} gid ${SERVICE_ID}`,
      );
    } finally {
      chmodSync(service.configPath, 0o640);
    }
  });

  test("check-config as the service user lists an impossible port, a misspelled key, a bad duration and a root-only certificate key, each with its key path", async () => {
    const copy = join(service.root, "etc/postroom/broken.toml");
    const rootOnlyKey = join(lineage.path, "privkey.pem");
    const config = parse(await Bun.file(service.configPath).text()) as Record<string, any>;
    config.http.listen = "127.0.0.1:99999";
    config.inbound.target_timout = "30s";
    config.inbound.target_timeout = "half a minute";
    config.tls.key_file = rootOnlyKey;
    service.sh(`install -m 640 -g ${SERVICE_ID} /dev/null ${copy}`);
    await Bun.write(copy, stringify(config));
    const r = Bun.spawnSync([...asServiceUser(service), join(service.root, "usr/local/bin/postroom"), "check-config", "--config", copy], {
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(r.exitCode).toBe(1);
    const [head, ...problems] = r.stderr.toString().trimEnd().split("\n");
    expect(head).toBe(`${copy}: 4 problems:`);
    expect(problems.map((p) => p.trim()).sort()).toEqual(
      [
        'http.listen: must be "host:port" with a port from 0 to 65535 (e.g. "0.0.0.0:25", "[::]:25"), or "" for off',
        'inbound.target_timout: unknown key; did you mean "target_timeout"?',
        'inbound.target_timeout: must be a duration such as "30s", "5m", "2h" or "5d"',
        `tls.key_file: ${rootOnlyKey}: permission denied for uid ${SERVICE_ID} gid ${SERVICE_ID} (give that user or its group read access)`,
      ].sort(),
    );
  });
});

describe.if(hasTools)("ACME mode on fixed ports, as the service user, with pebble", () => {
  let service: InstalledService;
  let server: ServeProcess;
  let dns: TestDnsServer;
  let pebble: Pebble;
  const ports: Ports = { http: 0, inbound: 0, submission: 0, submissionTls: 0 };

  beforeAll(async () => {
    Object.assign(ports, await fixedPorts());
    dns = await TestDnsServer.start();
    dns.set(NAME, [{ type: "A", address: "127.0.0.1" }]);
    pebble = await startPebble(dns.address);
    service = await installAsReadmeSays(SERVICE_ID, SERVICE_ID, async (configPath, root) => {
      // pebble's own CA, where the service user may read it (pebble's directory is root-only).
      const caFile = join(root, "etc/postroom/acme-ca.pem");
      mkdirSync(join(root, "etc/postroom"), { recursive: true });
      copyFileSync(pebble.caFile, caFile);
      await editConfig(configPath, join(root, "var/lib/postroom"), ports, {
        mode: "acme",
        acme: {
          directory_url: pebble.directoryUrl,
          email: "ops@postroom.test",
          domains: [NAME],
          challenge_listen: `127.0.0.1:${pebble.challengePort}`,
          ca_file: caFile,
        },
      });
      const config = parse(await Bun.file(configPath).text()) as Record<string, any>;
      config.dns = { servers: [dns.address] };
      await Bun.write(configPath, stringify(config));
    });
    chmodSync(join(service.root, "etc/postroom/acme-ca.pem"), 0o644);
    server = ServeProcess.run(unitCommand(service, "ExecStart"), service.stateDir);
  }, 60_000);

  afterAll(async () => {
    server?.signal("SIGTERM");
    await server?.exited();
    await pebble?.stop();
    await dns?.stop();
    service?.remove();
  });

  test("gets a certificate, then implicit TLS starts on its fixed port and accepts AUTH PLAIN from swaks", async () => {
    await server.waitFor((l) => l.msg === "submission smtp listening" && l.tls === "implicit", 45_000);
    expect(await healthz(ports.http, server)).toBe(200);
    const { smtpUser, smtpPassword } = secretsOf(service.initOutput);
    await expectTlsAuth(ports.submissionTls, "--tlsc", smtpUser, smtpPassword);
    await expectTlsAuth(ports.submission, "--tls", smtpUser, smtpPassword);
    expect(server.lines.filter((l) => l.msg === "submission smtp listening" && l.tls === "implicit").map((l) => l.port)).toEqual([
      ports.submissionTls,
    ]);
    expect(server.lines.filter((l) => l.level === "error")).toEqual([]);
  }, 60_000);
});
