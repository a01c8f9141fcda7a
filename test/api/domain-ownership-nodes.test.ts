// A domain taken back by DNS proof on one node routes to its new owner at once on another
// node of the same PostgreSQL (issue 31, finding 4): two appliances in this process, each
// its own data_dir (the same keys copied into both, as an operator does) and its own
// inbound listener, one DNS server, one HTTP target. The claim goes through node 1; mail
// goes to node 2's listener right after, with no wait.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { bearer, type TestApp } from "../helpers/app.ts";
import { APP_ENGINES } from "../helpers/app-engines.ts";
import { startTestNodes } from "../helpers/app-nodes.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { startMigratedPostgres, type Postgres } from "../helpers/postgres.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const engine = APP_ENGINES.find((e) => e.name === "PostgreSQL")!;
const it = engine.test;
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const B = `/api/v0.1/${ACCOUNT_B.id}`;

describe("a domain moved by proof, seen from another node", () => {
  let pg: Postgres | undefined;
  let dns: TestDnsServer;
  let target: TestTarget;
  let node1: TestApp;
  let node2: TestApp;
  const dir = tempDir();

  beforeAll(async () => {
    if (!engine.available()) return;
    pg = await startMigratedPostgres();
    dns = await TestDnsServer.start();
    target = TestTarget.start();
    [node1, node2] = (await startTestNodes(pg, dir.path, 2, { dnsServer: dns.address, inbound: true })) as [TestApp, TestApp];
  }, 60_000);
  afterAll(async () => {
    await node2?.stop();
    await node1?.stop();
    await pg?.stop();
    await dns?.stop();
    await target?.stop();
    dir.remove();
  });

  it("mail to the domain goes to the new owner's target through node 2 as soon as node 1 answered the claim", async () => {
    const address = async (path: string, token: string, to: string) =>
      (await node1.json("POST", `${path}/addresses`, { auth: bearer(token), body: { target: target.url(to), target_format: "json+n" } }))
        .body.id as string;
    const addressA = await address(A, ACCOUNT_A.token, "/a");
    const addressB = await address(B, ACCOUNT_B.token, "/b");
    // B's claim from before the fix.
    await node1.app.repos.customDomains.insert({
      id: "b0000000000c1a18",
      accountId: ACCOUNT_B.id,
      addressId: addressB,
      domain: "moved.example",
      authRegex: null,
      domainTarget: null,
      mxVerified: true,
      mxCheckedAtMs: Date.now(),
      createdAtMs: Date.now(),
    });
    const deliverVia = async (node: TestApp) => {
      const before = target.at("/a").length + target.at("/b").length;
      const sent = await sendWithNodemailer(node.app.inboundPort!, {
        from: "alice@sender.test",
        to: "sales@moved.example",
        subject: "which tenant?",
        text: "hello",
      });
      expect(sent.ok).toBe(true);
      expect(target.received).toHaveLength(before + 1);
      return target.received.at(-1)!.path;
    };
    expect(await deliverVia(node2)).toBe("/b");

    const claim = () =>
      node1.json("POST", `${A}/custom_domains?address_id=${addressA}`, {
        auth: bearer(ACCOUNT_A.token),
        body: { domain: "moved.example" },
      });
    const refused = await claim();
    expect(refused.status).toBe(409);
    // Node 2 asks for the same record: the token depends on the keys every node shares.
    const fromNode2 = await node2.json("POST", `${A}/custom_domains?address_id=${addressA}`, {
      auth: bearer(ACCOUNT_A.token),
      body: { domain: "moved.example" },
    });
    expect(fromNode2.body).toEqual(refused.body);
    dns.set(refused.body.verification.host, [{ type: "TXT", data: refused.body.verification.value }]);
    expect((await claim()).status).toBe(201);
    expect(await deliverVia(node2)).toBe("/a");
    expect(await deliverVia(node1)).toBe("/a");
    const listedB = await node2.json("GET", `${B}/custom_domains?address_id=${addressB}`, { auth: bearer(ACCOUNT_B.token) });
    expect(listedB.body).toEqual([]);
  });
});
