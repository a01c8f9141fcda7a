// A real DNS server on loopback (dns2, UDP) serving a zone the test controls. The
// appliance's resolver talks to it exactly as it would to any resolver.
import dns2 from "dns2";

const Packet = dns2.Packet as any;

export type ZoneRecord =
  | { type: "A"; address: string }
  | { type: "AAAA"; address: string }
  | { type: "MX"; exchange: string; priority: number }
  | { type: "TXT"; data: string | string[] }
  | { type: "CNAME"; domain: string };

export class TestDnsServer {
  /** name (lowercase, no final dot) → records. Tests change it at will. */
  readonly zone = new Map<string, ZoneRecord[]>();
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
      if (!records) {
        response.header.rcode = Packet.RCODE.NXDOMAIN;
      } else {
        for (const { type, ...data } of records) {
          if (Packet.TYPE[type] !== question.type) continue;
          response.answers.push({ name: question.name, type: Packet.TYPE[type], class: Packet.CLASS.IN, ttl: 60, ...data });
        }
      }
      send(response);
    };
    const udp: any = dns2.createUDPServer(handle as never);
    await udp.listen(0, "127.0.0.1");
    const port = udp.address().port as number;
    const tcp: any = dns2.createTCPServer(handle as never);
    await new Promise<void>((resolve, reject) => {
      tcp.once("error", reject);
      tcp.listen(port, "127.0.0.1", () => resolve());
    });
    self = new TestDnsServer(udp, tcp, port);
    return self;
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
