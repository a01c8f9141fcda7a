// A sending domain made the way a customer makes one: added through the API, its
// dns_records published in the test's real DNS server, then verified (E18).
import { expect } from "bun:test";
import { bearer, type TestApp } from "./app.ts";
import type { TestDnsServer } from "./dns-server.ts";

/** The sending address test configs authorise (outbound.sending_ips). */
export const SENDING_IP = "127.0.0.1";
export const SENDING_KEYS = `sending_ips = ["${SENDING_IP}"]`;

/** TXT values longer than 255 characters go out as several strings of one record. */
export const txtStrings = (value: string): string[] => value.match(/.{1,255}/g) ?? [""];

/** Publishes every record of a sending domain record (as E15/E16 return it) in `dns`. */
export function publishRecords(dns: TestDnsServer, record: { dns_records: { type: string; host: string; value: string }[] }): void {
  dns.followCnames = true;
  for (const r of record.dns_records) {
    if (r.type === "CNAME") dns.set(r.host, [{ type: "CNAME", domain: r.value }]);
    else dns.set(r.host, [...(dns.zone.get(r.host) ?? []).filter((x) => x.type !== "TXT"), { type: "TXT", data: txtStrings(r.value) }]);
  }
}

export async function verifiedSendingDomain(
  t: TestApp,
  dns: TestDnsServer,
  account: { id: string; token: string },
  domain: string,
): Promise<any> {
  const auth = bearer(account.token);
  const created = await t.json("POST", `/api/v0.1/${account.id}/sending_domains`, { auth, body: { domain } });
  expect(created.status).toBe(201);
  publishRecords(dns, created.body);
  const verified = await t.json("POST", `/api/v0.1/${account.id}/sending_domains/${created.body.id}/verify`, { auth });
  expect({ status: verified.status, reasons: verified.body.dns_records?.map((r: { reason: string | null }) => r.reason) }).toEqual({
    status: 200,
    reasons: [null, null, null, null],
  });
  return verified.body;
}
