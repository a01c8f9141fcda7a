// Each received message's line is named by what the target did with it, at the level an
// operator should look at it (issue 37): posted (2xx, info), refused by target (4xx, info),
// deferred (5xx, timeout, unreachable: warn); an unreachable target's reason is said once,
// with the URL, never its credentials or query.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/logger.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

type Line = Record<string, unknown> & { msg: string; level: string };
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const lines: Line[] = [];
let t: TestApp;
let target: TestTarget;
let closedPort: number;

beforeAll(async () => {
  target = TestTarget.start();
  target.answers.set("/invalid", { status: 422, contentType: "text/plain", body: "no such ticket" });
  target.answers.set("/busy", { status: 503, contentType: "text/plain", body: "busy" });
  t = await startTestApp({ inbound: true, logger: createLogger({ level: "info", sink: (l) => lines.push(JSON.parse(l)) }) });
  // A port nothing listens on, taken after the app bound its own: freed before, it could
  // come back as one of the app's listeners, which answered the POST with a 404.
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  closedPort = probe.port!;
  probe.stop(true);
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

/** Sends one message to a new address on `url`; the line logged for it. */
async function lineFor(url: string): Promise<{ line: Line; addressId: string }> {
  const created = await t.json("POST", `${A}/addresses`, { auth, body: { target: url, target_format: "json+n" } });
  expect(created.status).toBe(201);
  await sendWithNodemailer(t.app.inboundPort!, { from: "ann@sender.test", to: created.body.email, subject: "s", text: "x" });
  const found = lines.filter((l) => l.address_id === created.body.id && l.status_id !== undefined);
  expect(found).toHaveLength(1);
  return { line: found[0]!, addressId: created.body.id };
}

describe("inbound outcomes in the log", () => {
  test("2xx: inbound posted, at info", async () => {
    const { line } = await lineFor(target.url("/ok"));
    expect(line).toMatchObject({ msg: "inbound posted", level: "info", status: "200", reply: "250 2.0.0 Accepted" });
  });

  test("4xx: inbound refused by target, at info", async () => {
    const { line } = await lineFor(target.url("/invalid"));
    expect(line).toMatchObject({ msg: "inbound refused by target", level: "info", status: "422", reply: "550 5.7.1 no such ticket" });
  });

  test("5xx: inbound deferred, at warn", async () => {
    const { line } = await lineFor(target.url("/busy"));
    expect(line).toMatchObject({ msg: "inbound deferred", level: "warn", status: "503", reply: "451 4.3.0 busy" });
  });

  test("unreachable: inbound deferred, at warn, with the reason once and the URL without credentials or query", async () => {
    const { line, addressId } = await lineFor(`http://hook:pw-secret@127.0.0.1:${closedPort}/in?key=q-secret`);
    const reason = `ECONNREFUSED: Unable to connect (POST http://127.0.0.1:${closedPort}/in)`;
    expect(line).toMatchObject({ msg: "inbound deferred", level: "warn", status: "unreachable", reason });
    const [status] = (await t.json("GET", `${A}/incoming_statuses?address_id=${addressId}`, { auth })).body;
    expect(status.response).toBe(reason);
    expect(JSON.stringify(lines)).not.toContain("secret");
  });
});
