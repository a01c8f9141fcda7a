// Durability: every message that got a 202 is delivered, and every message that got a 250
// on port 25 has its incoming status, even when the process is killed with SIGKILL in the
// middle of a burst and started again.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { ServeProcess } from "../helpers/process.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

/** The API on `port` as account A (`path` from the host on, as Link headers give it). */
const api = (port: number, path: string, method = "GET", body?: unknown) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${ACCOUNT_A.token}`, "content-type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
const A = `/api/v0.1/${ACCOUNT_A.id}`;

describe("kill -9 during a burst of sends", () => {
  test("every 202 is delivered after a restart, at least once", async () => {
    const sink = await SmtpSink.start();
    const dns = await TestDnsServer.start();
    routeToSink(dns, "example.org");
    const config = join(dir.path, "postroom.toml");
    await Bun.write(
      config,
      testConfigToml({
        dataDir: join(dir.path, "data"),
        dnsServer: dns.address,
        accounts: [ACCOUNT_A],
        outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
      }).replace('level = "warn"', 'level = "info"'),
    );
    const acknowledged = new Set<string>();
    let refused = 0;
    try {
      const first = ServeProcess.spawn(config);
      const port = await first.httpPort();
      // The sender's domain, added and verified the way a customer does it.
      const domain = (await (await api(port, `${A}/sending_domains`, "POST", { domain: "sender.test" })).json()) as {
        id: string;
        dns_records: { type: string; host: string; value: string }[];
      };
      publishRecords(dns, domain);
      expect((await api(port, `${A}/sending_domains/${domain.id}/verify`, "POST")).status).toBe(200);
      const url = `http://127.0.0.1:${port}/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
      let killed = false;
      const sendOne = async (i: number) => {
        try {
          const res = await fetch(url, {
            method: "POST",
            headers: { authorization: `Bearer ${ACCOUNT_A.smtpKey}`, "content-type": "application/json" },
            body: JSON.stringify({ from: "ann@sender.test", to: `r${i}@example.org`, subject: `burst ${i}`, plain: `message ${i}` }),
          });
          if (res.status === 202) acknowledged.add(((await res.json()) as { id: string }).id);
          else refused++;
        } catch {
          refused++; // the connection died with the process: no 202, no promise made
        }
        if (!killed && acknowledged.size >= 150) {
          killed = true;
          first.signal("SIGKILL");
        }
      };
      // 8 senders in parallel, 40 messages each; the kill lands in the middle.
      await Promise.all(
        Array.from({ length: 8 }, (_, w) =>
          (async () => {
            for (let i = 0; i < 40; i++) await sendOne(w * 40 + i);
          })(),
        ),
      );
      expect(killed).toBe(true);
      expect(await first.exited()).not.toBe(0);
      const deliveredBeforeRestart = new Set(sink.messages.map((m) => /^bounces\+([0-9a-f-]{36})-/.exec(m.mailFrom)?.[1]));

      const second = ServeProcess.spawn(config);
      await second.httpPort();
      const delivered = () => new Set(sink.messages.map((m) => /^bounces\+([0-9a-f-]{36})-/.exec(m.mailFrom)?.[1]));
      await eventually(() => [...acknowledged].every((id) => delivered().has(id)), 30_000, "every acknowledged message delivered");
      const copies = new Map<string, number>();
      for (const m of sink.messages) {
        const id = /^bounces\+([0-9a-f-]{36})-/.exec(m.mailFrom)![1]!;
        copies.set(id, (copies.get(id) ?? 0) + 1);
      }
      const duplicates = [...copies.values()].filter((n) => n > 1).length;
      // The figures for the closing note: how many were acknowledged, delivered, duplicated.
      console.info(
        `crash test: ${acknowledged.size} acknowledged (202), ${refused} not acknowledged, ${deliveredBeforeRestart.size} delivered before the kill, ` +
          `${[...acknowledged].filter((id) => delivered().has(id)).length} of the acknowledged delivered after the restart, ${duplicates} delivered twice`,
      );
      expect([...acknowledged].filter((id) => !delivered().has(id))).toEqual([]);
      second.signal("SIGTERM");
      expect(await second.exited()).toBe(0);
    } finally {
      await sink.stop();
      await dns.stop();
    }
  }, 60_000);
});

describe("kill -9 during a burst of inbound mail", () => {
  test("every message that got a 250 has its incoming status after a restart, exactly once", async () => {
    const target = TestTarget.start();
    const dns = await TestDnsServer.start();
    const config = join(dir.path, "inbound.toml");
    await Bun.write(
      config,
      testConfigToml({ dataDir: join(dir.path, "data-inbound"), dnsServer: dns.address, accounts: [ACCOUNT_A], inbound: true }).replace(
        'level = "warn"',
        'level = "info"',
      ),
    );
    const accepted = new Set<string>();
    try {
      const first = ServeProcess.spawn(config);
      const httpPort = await first.httpPort();
      const smtpPort = (await first.waitFor((l) => l.msg === "inbound smtp listening")).port as number;
      const address = (await (
        await api(httpPort, `${A}/addresses`, "POST", { target: target.url("/in"), target_format: "json+n" })
      ).json()) as { id: string; email: string };
      let killed = false;
      // 4 senders in parallel, 30 messages each; the kill lands in the middle.
      await Promise.all(
        Array.from({ length: 4 }, (_, w) =>
          (async () => {
            for (let i = 0; i < 30 && !killed; i++) {
              const messageId = `<burst-${w}-${i}@sender.test>`;
              const result = await sendWithNodemailer(smtpPort, {
                from: "alice@sender.test",
                to: address.email,
                subject: `burst ${w}-${i}`,
                text: "x",
                messageId,
              });
              if (result.code === 250) accepted.add(messageId.slice(1, -1));
              if (!killed && accepted.size >= 40) {
                killed = true;
                first.signal("SIGKILL");
              }
            }
          })(),
        ),
      );
      expect(killed).toBe(true);
      expect(await first.exited()).not.toBe(0);

      const second = ServeProcess.spawn(config);
      const port = await second.httpPort();
      const listed: string[] = [];
      for (let path: string | null = `${A}/incoming_statuses?address_id=${address.id}`; path; ) {
        const res = await api(port, path);
        expect(res.status).toBe(200);
        listed.push(...((await res.json()) as { message_id: string }[]).map((s) => s.message_id));
        path = /<([^>]+)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1] ?? null;
      }
      console.info(
        `inbound crash test: ${accepted.size} messages got 250 before the kill; ${listed.length} incoming statuses after the restart`,
      );
      expect([...accepted].filter((id) => !listed.includes(id))).toEqual([]);
      expect(listed.length).toBe(new Set(listed).size);
      second.signal("SIGTERM");
      expect(await second.exited()).toBe(0);
    } finally {
      await target.stop();
      await dns.stop();
    }
  }, 60_000);
});
