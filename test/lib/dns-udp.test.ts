// The resolver's UDP client (src/lib/dns-udp.ts) against a DNS server on loopback that
// records where each query came from and can answer wrongly first: queries share one
// socket until QUERIES_PER_SOCKET, then move to a new source port; only the answer from
// the server, with the query's ID and question, settles a query.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import dgram from "node:dgram";
import dns2 from "dns2";
import { type DnsMessage, QUERIES_PER_SOCKET, UdpDnsClient } from "../../src/lib/dns-udp.ts";

const Packet = (dns2 as any).Packet;

/** How the server answers one query: with these replies, in order (or none at all). */
type Script = (query: any) => { from?: "server" | "stranger"; reply: any }[];

class ScriptedDnsServer {
  readonly sourcePorts: number[] = [];
  script: Script = (q) => [{ reply: answerFor(q, "192.0.2.1") }];
  private constructor(
    private readonly socket: dgram.Socket,
    private readonly stranger: dgram.Socket,
  ) {
    socket.on("message", (msg, rinfo) => {
      this.sourcePorts.push(rinfo.port);
      const query = Packet.parse(msg);
      for (const { from, reply } of this.script(query))
        (from === "stranger" ? this.stranger : this.socket).send(reply.toBuffer(), rinfo.port, rinfo.address);
    });
  }
  static async start(): Promise<ScriptedDnsServer> {
    const bind = (s: dgram.Socket) => new Promise<void>((resolve) => s.bind(0, "127.0.0.1", resolve));
    const socket = dgram.createSocket("udp4");
    const stranger = dgram.createSocket("udp4");
    await bind(socket);
    await bind(stranger);
    return new ScriptedDnsServer(socket, stranger);
  }
  get port(): number {
    return this.socket.address().port;
  }
  stop(): void {
    this.socket.close();
    this.stranger.close();
  }
}

/** A real answer to `query` (its ID and question) with one A record, or with `change` applied. */
function answerFor(query: any, address: string, change: (r: any) => void = () => {}): any {
  const response = Packet.createResponseFromRequest(query);
  const [q] = query.questions;
  response.answers.push({ name: q.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 60, address });
  change(response);
  return response;
}

const addressOf = (m: DnsMessage) => (m.answers[0] as { address: string }).address;
const noTcp = () => Promise.reject(new Error("no TCP in this test"));

let server: ScriptedDnsServer;
let client: UdpDnsClient;
beforeEach(async () => {
  server = await ScriptedDnsServer.start();
  client = new UdpDnsClient("127.0.0.1", server.port, 1000, noTcp);
});
afterEach(() => {
  client.close();
  server.stop();
});

describe("one socket for many queries", () => {
  test("queries in flight at once share a socket and each gets its own answer", async () => {
    server.script = (q) => [{ reply: answerFor(q, `192.0.2.${Number(/^h(\d+)\./.exec(q.questions[0].name)![1])}`) }];
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => client.query(`h${i + 1}.example.test`, "A")));
    expect(answers.map(addressOf)).toEqual(Array.from({ length: 50 }, (_, i) => `192.0.2.${i + 1}`));
    expect(new Set(server.sourcePorts).size).toBe(1);
  });

  test(`after ${QUERIES_PER_SOCKET} queries the next ones come from a new source port`, async () => {
    for (let i = 0; i < QUERIES_PER_SOCKET + 5; i++) await client.query("a.example.test", "A");
    const first = server.sourcePorts.slice(0, QUERIES_PER_SOCKET);
    const later = server.sourcePorts.slice(QUERIES_PER_SOCKET);
    expect(new Set(first).size).toBe(1);
    expect(new Set(later).size).toBe(1);
    expect(later[0]).not.toBe(first[0]);
  });
});

describe("only the real answer settles a query", () => {
  test("answers with another ID or another question are dropped; the real one that follows is taken", async () => {
    server.script = (q) => [
      { reply: answerFor(q, "203.0.113.66", (r) => (r.header.id = (q.header.id + 1) & 0xffff)) },
      { reply: answerFor(q, "203.0.113.67", (r) => (r.questions = [{ ...q.questions[0], name: "other.example.test" }])) },
      { reply: answerFor(q, "203.0.113.68", (r) => (r.questions = [{ ...q.questions[0], type: Packet.TYPE.MX }])) },
      { reply: answerFor(q, "192.0.2.7") },
    ];
    expect(addressOf(await client.query("a.example.test", "A"))).toBe("192.0.2.7");
  });

  test("the question's name is compared without case (RFC 4343)", async () => {
    server.script = (q) => [{ reply: answerFor(q, "192.0.2.9", (r) => (r.questions = [{ ...q.questions[0], name: "A.Example.TEST" }])) }];
    expect(addressOf(await client.query("a.example.test", "A"))).toBe("192.0.2.9");
  });

  test("an answer from another port is dropped: the query times out", async () => {
    server.script = (q) => [{ from: "stranger", reply: answerFor(q, "203.0.113.66") }];
    await expect(client.query("a.example.test", "A")).rejects.toMatchObject({ code: "ETIMEDOUT" });
  });

  test("a query with no answer times out; the socket goes on serving the next queries", async () => {
    let silent = true;
    server.script = (q) => (silent ? [] : [{ reply: answerFor(q, "192.0.2.3") }]);
    await expect(client.query("a.example.test", "A")).rejects.toMatchObject({ code: "ETIMEDOUT" });
    silent = false;
    expect(addressOf(await client.query("a.example.test", "A"))).toBe("192.0.2.3");
  });

  test("a truncated answer (TC) is asked again over TCP", async () => {
    server.script = (q) => [{ reply: answerFor(q, "192.0.2.1", (r) => (r.header.tc = 1)) }];
    const asked: string[] = [];
    const viaTcp = new UdpDnsClient("127.0.0.1", server.port, 1000, async (name, type) => {
      asked.push(`${name} ${type}`);
      return { header: { id: 1, rcode: 0, tc: 0 }, questions: [], answers: [{ address: "192.0.2.99" }] };
    });
    try {
      expect(addressOf(await viaTcp.query("big.example.test", "TXT"))).toBe("192.0.2.99");
      expect(asked).toEqual(["big.example.test TXT"]);
    } finally {
      viaTcp.close();
    }
  });
});
