// A real DNS server on loopback (dns2, UDP) serving a zone the test controls. The
// appliance's resolver talks to it exactly as it would to any resolver.
import dns2 from "dns2";

const Packet = dns2.Packet as any;

export type ZoneRecord =
  | { type: "A"; address: string }
  | { type: "AAAA"; address: string }
  | { type: "MX"; exchange: string; priority: number; ttl?: number }
  | { type: "TXT"; data: string | string[] }
  | { type: "CNAME"; domain: string }
  /** Type 99 (RFC 4408, obsolete): served as its own type only, never as TXT. */
  | { type: "SPF"; data: string | string[] }
  | { type: "PTR"; domain: string }
  | { type: "CAA"; flags: number; tag: string; value: string }
  /**
   * Not a record: a query for a type that has no record listed before this marker gets
   * no answer at all, so the client times out (the RFC 7208 test suite's TIMEOUT). Types
   * listed before it are answered as usual.
   */
  | { type: "TIMEOUT" }
  /**
   * Not a record: a query of type `qtype` for this name is answered with `rcode` and no
   * records (SERVFAIL, REFUSED) or not at all (TIMEOUT), as a broken resolver would;
   * queries of other types are answered as usual.
   */
  | { type: "FAIL"; qtype: "A" | "AAAA" | "MX" | "TXT" | "CNAME" | "PTR" | "CAA"; rcode: "SERVFAIL" | "REFUSED" | "TIMEOUT" };

export class TestDnsServer {
  /** name (lowercase, no final dot) → records. Tests change it at will. */
  readonly zone = new Map<string, ZoneRecord[]>();
  /**
   * Answer like a recursive resolver: a query for a name that has a CNAME (and no record
   * of the asked type) gets the CNAME chain and the target's records, a CNAME loop gets
   * SERVFAIL and a chain to a missing name NXDOMAIN. Off by default: then a CNAME is
   * only returned to a CNAME query.
   */
  followCnames = false;
  private constructor(
    private udp: any,
    private tcp: any,
    readonly port: number,
  ) {}

  /** UDP and TCP on one loopback port (clients retry truncated answers over TCP). */
  static async start(): Promise<TestDnsServer> {
    let self: TestDnsServer | null = null;
    const handle = (request: any, send: (r: any) => void) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = String(question.name).toLowerCase().replace(/\.$/, "");
      const records = self?.zone.get(name);
      const failure = records?.find(
        (r): r is Extract<ZoneRecord, { type: "FAIL" }> => r.type === "FAIL" && Packet.TYPE[r.qtype] === question.type,
      );
      if (failure?.rcode === "TIMEOUT") return; // never answer
      if (failure) {
        response.header.rcode = Packet.RCODE[failure.rcode];
      } else if (!records) {
        response.header.rcode = Packet.RCODE.NXDOMAIN;
      } else if (timesOut(records, question.type)) {
        return; // never answer: the client's timeout is the point
      } else {
        for (const { type, ...data } of records) {
          if (Packet.TYPE[type] !== question.type) continue;
          response.answers.push({ name: question.name, type: Packet.TYPE[type], class: Packet.CLASS.IN, ttl: 60, ...data });
        }
        if (self?.followCnames && response.answers.length === 0 && question.type !== Packet.TYPE.CNAME) {
          if (followCname(self.zone, question.name, records, question.type, response) === "timeout") return;
        }
      }
      send(response);
    };
    // The UDP port is free, but the same TCP port may be taken: try again with another.
    for (let attempt = 1; ; attempt++) {
      const udp: any = dns2.createUDPServer(handle as never);
      await udp.listen(0, "127.0.0.1");
      const port = udp.address().port as number;
      const tcp: any = dns2.createTCPServer(handle as never);
      try {
        await new Promise<void>((resolve, reject) => {
          tcp.once("error", reject);
          tcp.listen(port, "127.0.0.1", () => resolve());
        });
      } catch (err) {
        udp.close();
        if (attempt < 20 && (err as { code?: string }).code === "EADDRINUSE") continue;
        throw err;
      }
      self = new TestDnsServer(udp, tcp, port);
      return self;
    }
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  set(name: string, records: ZoneRecord[]): void {
    this.zone.set(name.toLowerCase(), records);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.udp.close(() => resolve()));
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
  }
}

/** Whether a TIMEOUT marker comes before every record of the asked type. */
function timesOut(records: readonly ZoneRecord[], qtype: number): boolean {
  for (const record of records) {
    if (record.type === "TIMEOUT") return true;
    if (Packet.TYPE[record.type] === qtype) return false;
  }
  return false;
}

/** Adds the CNAME chain from `owner` and the records of its end to `response`. */
function followCname(
  zone: Map<string, ZoneRecord[]>,
  owner: string,
  records: readonly ZoneRecord[],
  qtype: number,
  response: any,
): "timeout" | void {
  const seen = new Set([owner.toLowerCase().replace(/\.$/, "")]);
  for (;;) {
    const cname = records.find((r): r is Extract<ZoneRecord, { type: "CNAME" }> => r.type === "CNAME");
    if (!cname) return;
    response.answers.push({ name: owner, type: Packet.TYPE.CNAME, class: Packet.CLASS.IN, ttl: 60, domain: cname.domain });
    const target = cname.domain.toLowerCase().replace(/\.$/, "");
    if (seen.has(target) || seen.size >= 16) {
      response.answers = [];
      response.header.rcode = Packet.RCODE.SERVFAIL;
      return;
    }
    seen.add(target);
    const next = zone.get(target);
    if (!next) {
      response.header.rcode = Packet.RCODE.NXDOMAIN;
      return;
    }
    if (timesOut(next, qtype)) return "timeout";
    owner = cname.domain.replace(/\.$/, "");
    records = next;
    for (const { type, ...data } of records) {
      if (Packet.TYPE[type] !== qtype) continue;
      response.answers.push({ name: owner, type: Packet.TYPE[type], class: Packet.CLASS.IN, ttl: 60, ...data });
    }
    if (records.some((r) => Packet.TYPE[r.type] === qtype)) return;
  }
}
