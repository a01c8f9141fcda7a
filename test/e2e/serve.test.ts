// The real process: start, serve, reload on SIGHUP, stop, restart with data intact.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { testConfigToml } from "../helpers/fixtures.ts";
import { ServeProcess } from "../helpers/process.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

const TOKEN_1 = { id: "c000000000000003", token: "pr_first_token", outboundId: "c0000000000000f3", smtpKey: "pr_first_key" };

async function writeConfig(name: string, accounts = [TOKEN_1], logLevel = "info", dataDir = "data") {
  const path = join(dir.path, name);
  await Bun.write(path, testConfigToml({ dataDir: join(dir.path, dataDir), accounts }).replace('level = "warn"', `level = "${logLevel}"`));
  return path;
}

const api = (port: number, path: string, token: string, init: RequestInit = {}) =>
  fetch(`http://127.0.0.1:${port}/api/v0.1/${TOKEN_1.id}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers },
  });

describe("postroom serve", () => {
  let addressId = "";

  test("starts, answers /healthz, serves the API and stops cleanly on SIGTERM", async () => {
    const config = await writeConfig("postroom.toml");
    const p = ServeProcess.spawn(config);
    const port = await p.httpPort();
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    // The start line names the store and where each listener answers.
    const started = await p.waitFor((l) => l.msg === "postroom started");
    expect(started.store).toBe(`SQLite at ${join(dir.path, "data", "postroom.db")}`);
    expect(started.listeners).toEqual({ http: `127.0.0.1:${port}` });
    const created = await api(port, "/addresses", TOKEN_1.token, {
      method: "POST",
      body: JSON.stringify({ target: "https://a.example/", target_format: "json+n" }),
    });
    expect(created.status).toBe(201);
    addressId = ((await created.json()) as { id: string }).id;
    const domain = await api(port, `/custom_domains?address_id=${addressId}`, TOKEN_1.token, {
      method: "POST",
      body: JSON.stringify({ domain: "kept.example" }),
    });
    expect(domain.status).toBe(201);
    const log = await p.waitFor((l) => l.msg === "http request" && l.method === "POST");
    expect(log).toMatchObject({ level: "info", path: `/api/v0.1/${TOKEN_1.id}/addresses`, status: 201, account_id: TOKEN_1.id });
    expect(JSON.stringify(p.lines)).not.toContain(TOKEN_1.token);
    p.signal("SIGTERM");
    expect(await p.exited()).toBe(0);
  });

  test("a restart keeps every address and custom domain", async () => {
    const p = ServeProcess.spawn(join(dir.path, "postroom.toml"));
    const port = await p.httpPort();
    const got = await api(port, `/addresses/${addressId}`, TOKEN_1.token);
    expect(got.status).toBe(200);
    const domains = (await (await api(port, `/custom_domains?address_id=${addressId}`, TOKEN_1.token)).json()) as { domain: string }[];
    expect(domains.map((d: { domain: string }) => d.domain)).toEqual(["kept.example"]);
    p.signal("SIGTERM");
    expect(await p.exited()).toBe(0);
  });

  test("SIGHUP reloads accounts: the new token works at once, the old one is refused; a bad file is refused; what needs a restart is named", async () => {
    const config = await writeConfig("reload.toml");
    const p = ServeProcess.spawn(config);
    const port = await p.httpPort();
    expect((await api(port, "/addresses", TOKEN_1.token)).status).toBe(200);

    await writeConfig("reload.toml", [{ ...TOKEN_1, token: "pr_second_token" }], "debug");
    p.signal("SIGHUP");
    const reloaded = await p.waitFor((l) => l.msg === "config reloaded");
    // The logger keeps the level it started with.
    expect(reloaded.restart_needed_for).toEqual(["log"]);
    // What changed, by name only: never the token's hash.
    expect(reloaded.changed).toEqual([`accounts[${TOKEN_1.id}].api_tokens`, "log.level"]);
    expect(JSON.stringify(reloaded)).not.toContain("sha256:");
    expect((await api(port, "/addresses", "pr_second_token")).status).toBe(200);
    expect((await api(port, "/addresses", TOKEN_1.token)).status).toBe(401);

    await Bun.write(config, "this is = = not toml");
    p.signal("SIGHUP");
    const refused = await p.waitFor((l) => l.msg === "config reload refused; keeping the running config");
    expect(refused.problems[0]).toStartWith("line 1");
    expect((await api(port, "/addresses", "pr_second_token")).status).toBe(200);
    p.signal("SIGTERM");
    expect(await p.exited()).toBe(0);
  });

  test("a database written by a newer postroom is refused: exit 2 with the reason", async () => {
    const db = new Database(join(dir.path, "data", "postroom.db"));
    db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from the future', 0)");
    db.close();
    const p = ServeProcess.spawn(join(dir.path, "postroom.toml"));
    expect(await p.exited()).toBe(2);
    const line = await p.waitFor((l) => l.msg === "postroom failed to start");
    expect(line.err.message).toContain("the database is at schema version 999");
  });

  test("a second postroom on the same data_dir is refused (exit 2) and the first serves on", async () => {
    const config = await writeConfig("first.toml", [TOKEN_1], "info", "data-shared");
    const first = ServeProcess.spawn(config);
    const port = await first.httpPort();
    const second = ServeProcess.spawn(await writeConfig("second.toml", [TOKEN_1], "info", "data-shared"));
    expect(await second.exited()).toBe(2);
    const line = await second.waitFor((l) => l.msg === "postroom failed to start");
    expect(line.err.message).toContain(`is in use by process ${first.proc.pid}`);
    expect((await api(port, "/addresses", TOKEN_1.token)).status).toBe(200);
    first.signal("SIGTERM");
    expect(await first.exited()).toBe(0);
    // Stopped, it leaves the data_dir free.
    const third = ServeProcess.spawn(config);
    await third.httpPort();
    third.signal("SIGTERM");
    expect(await third.exited()).toBe(0);
  });

  test("a port already in use is a runtime failure (exit 2)", async () => {
    const blocker = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const path = join(dir.path, "busy.toml");
    await Bun.write(
      path,
      testConfigToml({ dataDir: join(dir.path, "data-busy"), accounts: [TOKEN_1] }).replace(
        'listen = "127.0.0.1:0"',
        `listen = "127.0.0.1:${blocker.port}"`,
      ),
    );
    const p = ServeProcess.spawn(path);
    expect(await p.exited()).toBe(2);
    blocker.stop(true);
  });
});
