// One measured run of a bench:cluster setup (bench/cluster.ts says what it measures):
// outbound, API sends shared out over the setup's nodes until the sink has them all;
// inbound, SMTP connections shared out over the nodes until the target has every POST.
// Each checks what it got and gives the rates and the CPU time per message of the setup's
// Postroom processes and of its PostgreSQL server.
import { sendAll } from "./api-client.ts";
import type { Setup, SetupCpu } from "./cluster-nodes.ts";
import { machineBusyMs, runTimeoutMs, until } from "./measure.ts";
import type { SignedMessage } from "./signed-senders.ts";
import { SmtpConnection } from "./smtp-client.ts";
import type { SmtpSinkProcess } from "./smtp-sink.ts";
import type { startTarget } from "./target.ts";

export interface ClusterResult {
  /** Messages per second: outbound, answered 202 (accepted) and at the sink (delivered); inbound, answered 250 (both the same). */
  accepted: number;
  delivered: number;
  /** CPU µs per message of the setup's Postroom processes, all nodes. */
  postroomUs: number;
  /** Of each node. */
  perNodeUs: number[];
  /** Of its PostgreSQL server; null on SQLite. */
  postgresUs: number | null;
  /** Of this process (the client; inbound also the target and the DNS server) and, outbound, the sink. */
  clientUs: number;
  sinkUs: number;
  /** Of every process on the machine. */
  machineUs: number;
}

/** After the last message arrived, wait this long for anything extra (duplicates) before checking the counts. */
const SETTLE_MS = 500;

/** `items` dealt out to `parts` in turn: item i goes to part i mod parts. */
export const dealt = <T>(items: readonly T[], parts: number): T[][] =>
  Array.from({ length: parts }, (_, p) => items.filter((_, i) => i % parts === p));

interface Marks {
  cpu: SetupCpu;
  client: NodeJS.CpuUsage;
  sink: number;
  machine: number;
  t0: number;
}

const mark = (setup: Setup, sink: SmtpSinkProcess | null): Marks => ({
  cpu: setup.cpuMs(),
  client: process.cpuUsage(),
  sink: sink?.cpuMs() ?? 0,
  machine: machineBusyMs(),
  t0: performance.now(),
});

function result(setup: Setup, sink: SmtpSinkProcess | null, m: Marks, count: number, tAccepted: number, tDelivered: number): ClusterResult {
  const cpu = setup.cpuMs();
  const client = process.cpuUsage(m.client);
  const us = (ms: number) => (ms * 1000) / count;
  return {
    accepted: (count * 1000) / (tAccepted - m.t0),
    delivered: (count * 1000) / (tDelivered - m.t0),
    postroomUs: us(cpu.nodes - m.cpu.nodes),
    perNodeUs: cpu.perNode.map((ms, i) => us(ms - m.cpu.perNode[i]!)),
    postgresUs: cpu.postgres === null ? null : us(cpu.postgres - m.cpu.postgres!),
    clientUs: us((client.user + client.system) / 1000),
    sinkUs: sink ? us(sink.cpuMs() - m.sink) : 0,
    machineUs: us(machineBusyMs() - m.machine),
  };
}

/**
 * Outbound: the `bodies` dealt out to the nodes, each node POSTed its share by its part of
 * the `clients` (at least one each); the clock stops when the sink has every message. Then
 * the sink must have exactly that many (none twice) and the nodes' logs as many deliveries
 * between them, no other outcome and no error line.
 */
export async function runClusterOutbound(setup: Setup, sink: SmtpSinkProcess, bodies: string[], clients: number): Promise<ClusterResult> {
  const count = bodies.length;
  const nodes = setup.nodes;
  const sink0 = sink.count;
  const tally0 = nodes.map((n) => ({ delivered: n.tally.delivered, other: n.tally.other.length, errors: n.tally.errors.length }));
  const logged = () => nodes.reduce((sum, n, i) => sum + n.tally.delivered - tally0[i]!.delivered, 0);
  const m = mark(setup, sink);
  const delivered = sink.reach(sink0 + count, runTimeoutMs(count), setup.label);
  delivered.catch(() => undefined);
  const shares = dealt(bodies, nodes.length);
  const sent = await Promise.all(nodes.map((n, i) => sendAll(n.httpPort, shares[i]!, Math.max(1, Math.round(clients / nodes.length)))));
  const tAccepted = performance.now();
  const failed = sent.reduce((sum, s) => sum + s.failed, 0);
  if (failed > 0)
    throw new Error(
      `${setup.label}: ${failed} of ${count} sends did not get 202; first answers:\n  ${sent
        .flatMap((s) => s.failures)
        .slice(0, 5)
        .join("\n  ")}`,
    );
  const tDelivered = await delivered.catch((err: Error) => {
    throw new Error(`${err.message}; the nodes logged ${logged()} deliveries`);
  });
  const r = result(setup, sink, m, count, tAccepted, tDelivered);
  await until(() => logged() >= count, 10_000);
  await Bun.sleep(SETTLE_MS);
  const other = nodes.flatMap((n, i) =>
    [...n.tally.other.slice(tally0[i]!.other), ...n.tally.errors.slice(tally0[i]!.errors)].map((line) => `${n.nodeId}: ${line}`),
  );
  if (sink.count - sink0 !== count || logged() !== count || other.length > 0) {
    throw new Error(
      `${setup.label}: ${count} sends accepted, but the sink received ${sink.count - sink0} and the nodes logged ${logged()} deliveries and ${other.length} other outcomes or errors:\n  ${other.slice(0, 5).join("\n  ")}`,
    );
  }
  return r;
}

/**
 * Inbound: `count` messages (`next` gives each) over `connections` SMTP connections, dealt
 * out to the nodes in turn; every one must get 250, and the target must then have exactly
 * one POST for each at the setup's path.
 */
export async function runClusterInbound(
  setup: Setup,
  target: ReturnType<typeof startTarget>,
  count: number,
  connections: number,
  next: () => SignedMessage,
): Promise<ClusterResult> {
  const counter = target.counter(`/${setup.kind}`);
  const posts0 = counter.posts;
  const conns = await Promise.all(
    Array.from({ length: connections }, (_, i) =>
      SmtpConnection.open("127.0.0.1", setup.nodes[i % setup.nodes.length]!.smtpPort, "client.sender.bench.test"),
    ),
  );
  const share = (i: number) => Math.floor(count / connections) + (i < count % connections ? 1 : 0);
  const failures: string[] = [];
  let failed = 0;
  const m = mark(setup, null);
  await Promise.all(
    conns.map(async (conn, i) => {
      for (let k = share(i); k > 0; k--) {
        const msg = next();
        const reply = await conn.send(msg.mailFrom, setup.rcpt, msg.data);
        if (reply.code !== 250) {
          failed++;
          if (failures.length < 5) failures.push(`${reply.code} ${reply.text}`);
        }
      }
    }),
  );
  const tDone = performance.now();
  const r = result(setup, null, m, count, tDone, tDone);
  await Promise.all(conns.map((c) => c.quit()));
  if (failed > 0)
    throw new Error(`${setup.label}: ${failed} of ${count} messages did not get 250; first replies:\n  ${failures.join("\n  ")}`);
  await until(() => counter.posts - posts0 >= count, 10_000);
  await Bun.sleep(SETTLE_MS);
  if (counter.posts - posts0 !== count)
    throw new Error(`${setup.label}: the target received ${counter.posts - posts0} POSTs for ${count} messages`);
  return r;
}
