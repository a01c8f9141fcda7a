// DNS queries over UDP to one server, on a socket that is kept and shared by the queries
// in flight, with each answer matched to its query by ID and question.
//
// Why not dns2's UDP client: it opens a socket for every query and closes it after the
// answer. Under Bun that costs about 90 µs of main-thread CPU per query (socket, bind,
// first send); inbound mail asks three or four questions per message (SPF, DKIM key,
// DMARC), so that was the largest part of the resolver's cost.
//
// Why the socket is still replaced now and then: a forged answer must guess the query ID
// (16 random bits) and, against a fresh socket per query, its source port too (RFC 5452).
// A socket that lived forever would leave only the ID. So a socket serves at most
// QUERIES_PER_SOCKET queries and SOCKET_MAX_AGE_MS of time; the next query opens a new
// one, on a new random port, and the old one closes once its last answer is in.
import dgram from "node:dgram";
import { randomInt } from "node:crypto";
import { isIP, isIPv6 } from "node:net";
import dns2 from "dns2";

const Packet = (dns2 as unknown as { Packet: DnsPacketClass }).Packet;

/** Queries one socket carries before the next query opens a new one (on a new source port). */
export const QUERIES_PER_SOCKET = 200;
/** How long one socket is used for new queries. */
export const SOCKET_MAX_AGE_MS = 10_000;

/** The parts of a decoded DNS message we read (dns2's Packet). */
export interface DnsMessage {
  header: { id: number; rcode: number; tc: number; rd?: number };
  questions: { name: string; type: number; class: number }[];
  answers: unknown[];
}

interface DnsPacketClass {
  new (): DnsMessage & { toBuffer(): Buffer };
  parse(buf: Buffer): DnsMessage;
  TYPE: Record<string, number>;
  CLASS: { IN: number };
}

interface Pending {
  name: string;
  type: number;
  resolve: (m: DnsMessage) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** A socket and the queries waiting for an answer on it. */
interface Lane {
  socket: dgram.Socket;
  pending: Map<number, Pending>;
  sent: number;
  openedAtMs: number;
  retired: boolean;
}

export class DnsTimeoutError extends Error {
  readonly code = "ETIMEDOUT";
}

/** Whether an answer's question is the one asked (names compare without case, RFC 4343). */
export function answersQuestion(m: DnsMessage, name: string, type: number): boolean {
  const q = m.questions[0];
  return (
    m.questions.length === 1 &&
    q !== undefined &&
    q.type === type &&
    q.name.replace(/\.$/, "").toLowerCase() === name.replace(/\.$/, "").toLowerCase()
  );
}

export class UdpDnsClient {
  private lane: Lane | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly timeoutMs: number,
    /** Asked instead when an answer comes truncated (TC): the same question over TCP. */
    private readonly overTcp: (name: string, type: string) => Promise<DnsMessage>,
  ) {}

  query(name: string, type: string): Promise<DnsMessage> {
    const typeNumber = Packet.TYPE[type];
    if (typeNumber === undefined) return Promise.reject(new Error(`unknown DNS type ${type}`));
    const lane = this.currentLane();
    const id = freeId(lane.pending);
    const packet = new Packet();
    packet.header.id = id;
    packet.header.rd = 1;
    packet.questions.push({ name, type: typeNumber, class: Packet.CLASS.IN });
    lane.sent++;
    return new Promise<DnsMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        lane.pending.delete(id);
        this.closeIfDone(lane);
        reject(new DnsTimeoutError(`DNS query for ${name} ${type} timed out after ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      timer.unref?.();
      lane.pending.set(id, { name, type: typeNumber, resolve, reject, timer });
      lane.socket.send(packet.toBuffer(), this.port, this.host, (err) => {
        if (err) this.settle(lane, id, (p) => p.reject(err));
      });
    }).then((m) => (m.header.tc ? this.overTcp(name, type) : m));
  }

  /** Closes the socket now; queries in flight fail. */
  close(): void {
    const lane = this.lane;
    this.lane = null;
    if (lane) this.fail(lane, new Error("the DNS client was closed"));
  }

  private currentLane(): Lane {
    const lane = this.lane;
    if (lane && !lane.retired && lane.sent < QUERIES_PER_SOCKET && performance.now() - lane.openedAtMs < SOCKET_MAX_AGE_MS) return lane;
    if (lane) {
      lane.retired = true;
      this.closeIfDone(lane);
    }
    const socket = dgram.createSocket(isIPv6(this.host) ? "udp6" : "udp4");
    const fresh: Lane = { socket, pending: new Map(), sent: 0, openedAtMs: performance.now(), retired: false };
    socket.on("message", (msg, rinfo) => this.onMessage(fresh, msg, rinfo));
    socket.on("error", (err) => {
      fresh.retired = true;
      if (this.lane === fresh) this.lane = null;
      this.fail(fresh, err);
    });
    // An idle resolver must not keep the process alive.
    socket.unref();
    this.lane = fresh;
    return fresh;
  }

  private onMessage(lane: Lane, msg: Buffer, rinfo: dgram.RemoteInfo): void {
    // Only the server asked may answer, and only the question asked; anything else
    // (a late answer to a query that timed out, a forgery, garbage) is dropped, and the
    // query goes on waiting for its real answer.
    if (rinfo.port !== this.port || (isIP(this.host) && rinfo.address !== this.host)) return;
    let m: DnsMessage;
    try {
      m = Packet.parse(msg);
    } catch {
      return;
    }
    const p = lane.pending.get(m.header.id);
    if (!p || !answersQuestion(m, p.name, p.type)) return;
    this.settle(lane, m.header.id, (q) => q.resolve(m));
  }

  private settle(lane: Lane, id: number, how: (p: Pending) => void): void {
    const p = lane.pending.get(id);
    if (!p) return;
    lane.pending.delete(id);
    clearTimeout(p.timer);
    how(p);
    this.closeIfDone(lane);
  }

  private fail(lane: Lane, err: Error): void {
    const all = [...lane.pending.values()];
    lane.pending.clear();
    for (const p of all) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    lane.retired = true;
    this.closeIfDone(lane);
  }

  private closeIfDone(lane: Lane): void {
    if (!lane.retired || lane.pending.size > 0) return;
    try {
      lane.socket.close();
    } catch {
      // already closed
    }
  }
}

/** A random query ID not in use on this socket (RFC 5452: all 16 bits, from a CSPRNG). */
function freeId(pending: Map<number, Pending>): number {
  for (;;) {
    const id = randomInt(0x10000);
    if (!pending.has(id)) return id;
  }
}
