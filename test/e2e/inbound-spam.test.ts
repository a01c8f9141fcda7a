// (beyond) Issue 35: spam_threshold, with the built binary and Debian's spamd on loopback.
// GTUBE scores far above the address's threshold: refused during the transaction with
// 550 5.7.1 and its score, never posted, recorded as rejected. Ordinary mail is delivered.
// With spamd down the mail is delivered as before and the status says it was not scored.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { join } from "node:path";
import { builtBinary } from "../helpers/binary.ts";
import { nodeApi } from "../helpers/cluster-node.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { ServeProcess } from "../helpers/process.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { GTUBE, spamdAvailable, startSpamd, type RunningSpamd } from "../helpers/spamd.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const it = requireTools("spamd");
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const dir = tempDir();
let target: TestTarget;
let spamd: RunningSpamd | null = null;
const running: ServeProcess[] = [];

beforeAll(async () => {
  target = TestTarget.start();
  if (spamdAvailable()) spamd = await startSpamd();
  builtBinary();
}, 180_000);
afterAll(async () => {
  for (const p of running) p.signal("SIGKILL");
  await spamd?.stop();
  await target.stop();
  dir.remove();
});

async function appliance(name: string, spamdAddress: string): Promise<{ http: number; smtp: number }> {
  const [http, smtp] = [await freePort(), await freePort()];
  const config = join(dir.path, `${name}.toml`);
  const toml = testConfigToml({
    dataDir: join(dir.path, name),
    inbound: true,
    inboundKeys: `[inbound.spamd]\naddress = "${spamdAddress}"\ntimeout = "10s"`,
    accounts: [ACCOUNT_A],
  })
    .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${http}"`)
    .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${smtp}"`)
    .replace('level = "warn"', 'level = "info"');
  await Bun.write(config, toml);
  const proc = ServeProcess.spawn(config, dir.path, [builtBinary()]);
  running.push(proc);
  await proc.waitFor((l) => l.msg === "postroom started", 30_000);
  return { http, smtp };
}

async function address(http: number, path: string): Promise<{ id: string; email: string }> {
  const res = await nodeApi(http, `${A}/addresses`, "POST", { target: target.url(path), target_format: "json+n", spam_threshold: 5 });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { id: string; email: string; spam_threshold: number };
  expect(body.spam_threshold).toBe(5);
  return body;
}

const statuses = async (http: number, addressId: string) =>
  (await (await nodeApi(http, `${A}/incoming_statuses?address_id=${addressId}`)).json()) as Record<string, any>[];

describe("spam_threshold", () => {
  it("GTUBE is refused with 550 5.7.1 and its score, recorded and never posted; ordinary mail is delivered", async () => {
    const a = await appliance("scored", spamd!.address);
    const addr = await address(a.http, "/scored");
    const spam = await sendWithNodemailer(a.smtp, { from: "alice@sender.test", to: addr.email, subject: "offer", text: `Buy\n${GTUBE}\n` });
    expect(spam.code).toBe(550);
    expect(spam.response).toMatch(
      /^550 5\.7\.1 Message refused as spam: SpamAssassin score \d+(\.\d+)? is above this address's limit of 5/,
    );
    expect(target.at("/scored")).toHaveLength(0);
    const [refused] = await statuses(a.http, addr.id);
    expect(refused).toMatchObject({ status: "rejected", status_category: "rejected", state: "rejected", attempts: 0, subject: "offer" });
    expect(refused!.response).toContain("SpamAssassin score");

    const ham = await sendWithNodemailer(a.smtp, {
      from: "alice@sender.test",
      to: addr.email,
      subject: "lunch",
      text: "Shall we have lunch on Thursday?\n",
    });
    expect(ham.code).toBe(250);
    expect(target.at("/scored")).toHaveLength(1);
    expect((await statuses(a.http, addr.id))[0]).toMatchObject({ status: "200", state: "delivered", response: null });
  }, 90_000);

  it("spamd down: GTUBE is delivered as before, and the status says it was not scored", async () => {
    const a = await appliance("unscored", `127.0.0.1:${await freePort()}`);
    const addr = await address(a.http, "/unscored");
    const sent = await sendWithNodemailer(a.smtp, { from: "alice@sender.test", to: addr.email, subject: "offer", text: `Buy\n${GTUBE}\n` });
    expect(sent.code).toBe(250);
    expect(target.at("/unscored")).toHaveLength(1);
    const [s] = await statuses(a.http, addr.id);
    expect(s).toMatchObject({ status: "200", state: "delivered" });
    expect(s!.response).toBe("not scored for spam_threshold, delivered: SpamAssassin: ECONNREFUSED");
  }, 60_000);
});
