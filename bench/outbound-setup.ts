// bench:outbound's set-up (bench/outbound.ts's header says how and why): the message, the
// sink, both DNS servers, the private Postfix, Postroom (and its DKIM check), each side's
// CPU cgroup, and the feeds; what the rounds run, each side as a `BenchSide`.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createResolver } from "../src/lib/dns.ts";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { SmtpSink } from "../test/helpers/sink.ts";
import { makeSelfSignedCert } from "../test/helpers/certs.ts";
import { apiContent, FROM_HEADER } from "./api-client.ts";
import { cpuProfileArgs } from "./child.ts";
import { CpuCgroup, processTree } from "./cgroup.ts";
import type { Cleanup } from "./cleanup.ts";
import { DeliveryTally } from "./delivery-tally.ts";
import { countQueries } from "./measure.ts";
import { buildMessage, MAIL_FROM, SENDER_DOMAIN } from "./message.ts";
import type { OutboundOptions } from "./outbound-options.ts";
import { DEST, outboundFeeds } from "./outbound-feed.ts";
import { runPostfix, runPostroom, type PostfixSide, type PostroomSide, type RunResult, type SideCpu } from "./outbound-run.ts";
import { checkPostfixSigns, DKIM_CHECK_DOMAIN } from "./postfix-dkim-check.ts";
import { PrivatePostfix } from "./postfix.ts";
import { ACCOUNT, startPostroom, verifiedSendingDomain } from "./postroom.ts";
import type { FeedTarget } from "./smtp-feed.ts";
import { checkPostroomSigns } from "./postroom-dkim-check.ts";
import { freePort, SmtpSinkProcess, waitForGreeting } from "./smtp-sink.ts";
import { UnboundServer } from "./unbound.ts";

/** Every destination domain's MX host. */
const MX_HOST = "mx.sink.bench.test";
const MX_SINK_HOST = "127.0.0.2";
/** Postfix's nameserver (port 53), through MX. */
const POSTFIX_DNS_HOST = "127.0.0.153";

/** A side's CPU time: its own cgroup if one can be made (bench/cgroup.ts), else the sum over its processes from /proc. */
function sideCpu(group: CpuCgroup | null, pids: () => number[], procMs: () => number): SideCpu {
  return group ? { enter: () => group.adopt(pids()), ms: () => group.usageUs() / 1000 } : { enter: () => undefined, ms: procMs };
}

/** How Postroom reaches the sink: as its smarthost, or as the MX of every recipient domain (answered by the loopback DNS). */
const relay = (route: "smarthost" | "mx", sinkPort: number) =>
  route === "smarthost" ? `smarthost = "smtp://127.0.0.1:${sinkPort}"` : `mx_port = ${sinkPort}\nallow_private_mx = true`;

/**
 * unbound on POSTFIX_DNS_HOST:53 with each destination's MX and the MX host's address, as
 * the tests' DNS server answers Postroom. Ready once it answers the first domain's MX.
 */
async function startPostfixDns(workDir: string, domains: number, sinkHost: string): Promise<UnboundServer> {
  const dir = join(workDir, "postfix-dns");
  mkdirSync(dir);
  const rrs = [...Array.from({ length: domains }, (_, d) => `${DEST(d + 1)}. 60 IN MX 10 ${MX_HOST}.`), `${MX_HOST}. 60 IN A ${sinkHost}`];
  const ready = (address: string) => createResolver({ servers: [address], timeoutMs: 500, cacheMaxEntries: 1 }).resolveMx(DEST(1));
  return UnboundServer.start(dir, [], ready, { host: POSTFIX_DNS_HOST, port: 53, rrs });
}

/** One side of the comparison, as the rounds run it and the report prints it. */
export interface BenchSide {
  label: string;
  run: (count: number) => Promise<RunResult>;
  /** The server's name in the CPU figures. */
  server: string;
  /** The load generator's name in the CPU figures. */
  client: string;
  /** The timed runs' results, in order. */
  results: RunResult[];
}

export type OutboundBench = Awaited<ReturnType<typeof setUpOutbound>>;

/** Everything the runs need, started; each thing that must be stopped is added to `cleanup`. */
export async function setUpOutbound(opts: OutboundOptions, cleanup: Cleanup, workDir: string) {
  const message = buildMessage(`rcpt@${DEST(1)}`);
  // The file smtp-source sends (-F): the wire form without the final dot and without
  // dot-stuffing (smtp-source adds it back, and CRLF after each line).
  const wire = Buffer.from(message.data(0)).toString("latin1");
  const messageFile = join(workDir, "message.eml");
  writeFileSync(
    messageFile,
    wire
      .slice(0, -3)
      .replace(/(^|\r\n)\.\./g, "$1.")
      .replace(/\r\n/g, "\n"),
    "latin1",
  );
  // What Postroom gets through the API: the same text, HTML and subject.
  const content = await apiContent(message);

  // Through MX, the sink is on 127.0.0.2: Postfix refuses an MX host that is one of its
  // own addresses (127.0.0.1, where it listens) as mail looping back to itself.
  const sink = await SmtpSinkProcess.start(opts.route === "mx" ? MX_SINK_HOST : "127.0.0.1");
  cleanup.add(() => sink.stop());

  // Postroom's DNS: the tests' server, answering its MX lookups and the sending domain's
  // records it publishes through the API (verifiedSendingDomain).
  const dns = await TestDnsServer.start();
  cleanup.add(() => dns.stop());
  for (let d = 1; d <= opts.domains; d++) dns.set(DEST(d), [{ type: "MX", exchange: MX_HOST, priority: 10 }]);
  dns.set(MX_HOST, [{ type: "A", address: sink.host }]);
  const dnsQueries = countQueries(dns);
  // Postfix's DNS, through MX: the same MX and A records from unbound on port 53 of its
  // own loopback address (Postfix's resolver takes only an address from resolv.conf).
  const postfixDns = opts.route === "mx" ? await startPostfixDns(workDir, opts.domains, sink.host) : null;
  if (postfixDns) cleanup.add(() => postfixDns.stop());

  // The capture sink of the check that Postfix signs; only the check's message goes there.
  const capture = await SmtpSink.start();
  cleanup.add(() => capture.stop());
  const postfix = await PrivatePostfix.start(sink.port, {
    signingDomain: opts.postfixSigns ? SENDER_DOMAIN : null,
    checkRoute: { domain: DKIM_CHECK_DOMAIN, port: capture.port },
    mx: postfixDns ? { nameserver: postfixDns.host, port: sink.port } : undefined,
    submission: opts.feed === "smtp",
  });
  cleanup.add(() => postfix.stop());
  const postfixSigned = opts.postfixSigns ? await checkPostfixSigns(postfix, capture, messageFile, MAIL_FROM) : "unsigned";
  // Each side's processes in a cgroup of its own: the load generators (this process,
  // smtp-source) and the sink stay outside both.
  const groups = { postroom: CpuCgroup.create("postroom"), postfix: CpuCgroup.create("postfix") };
  cleanup.add(() => {
    groups.postroom?.remove();
    groups.postfix?.remove();
  });

  // The SMTP feed: Postroom's submission port, with STARTTLS (a self-signed certificate) and AUTH as in production.
  const submissionPort = opts.feed === "smtp" ? await freePort() : 0;
  const submissionTls = opts.feed === "smtp" ? makeSelfSignedCert(workDir, "mx.postroom.bench") : undefined;
  /** Postroom as a fresh process on the run's data dir: the first start, and each cold round's (`relayTo`: the DKIM check's). */
  const startSide = async (relayTo?: string): Promise<PostroomSide & { httpPort: number; stop: () => Promise<void> }> => {
    const started = await startPostroom(
      workDir,
      dns.address,
      {
        relay: relayTo ?? relay(opts.route, sink.port),
        ...(submissionTls ? { submissionListen: `127.0.0.1:${submissionPort}`, tls: submissionTls } : {}),
      },
      relayTo ? [] : cpuProfileArgs(opts.profileDir, "postroom-outbound"),
    );
    if (submissionTls) await waitForGreeting(submissionPort, 15_000, "Postroom's submission port");
    const tally = new DeliveryTally(started.child);
    started.child.ready();
    return {
      cpu: sideCpu(
        groups.postroom,
        () => processTree(started.child.proc.pid),
        () => started.child.cpuMs(),
      ),
      httpPort: started.httpPort,
      postroom: started.child,
      sink,
      tally,
      clients: opts.clients,
      stop: async () => void (await started.child.stop()),
    };
  };
  const postroomTarget: FeedTarget = {
    host: "127.0.0.1",
    port: submissionPort,
    setup: { startTls: true, auth: { user: ACCOUNT.outboundId, password: ACCOUNT.smtpKey } },
  };
  // With the SMTP feed, first a Postroom relaying to the capture sink: the sending domain
  // is verified through it and one submitted message checked for its two signatures; the
  // runs' Postroom then starts on the same data dir.
  let postroomSigned = "not checked (--feed http)";
  if (opts.feed === "smtp") {
    const check = await startSide(`smarthost = "smtp://127.0.0.1:${capture.port}"`);
    try {
      await verifiedSendingDomain(check.httpPort, dns, SENDER_DOMAIN);
      postroomSigned = await checkPostroomSigns(postroomTarget, capture, dns);
    } finally {
      await check.stop();
    }
  }
  let postroomSide = await startSide();
  cleanup.add(() => postroomSide.stop());
  if (opts.feed !== "smtp") await verifiedSendingDomain(postroomSide.httpPort, dns, SENDER_DOMAIN);

  const postfixSide: PostfixSide = {
    cpu: sideCpu(
      groups.postfix,
      () => postfix.processIds(),
      () => postfix.cpuMs(),
    ),
    postfix,
    sink,
    clients: opts.clients,
    messageFile,
    rcpts: Array.from({ length: opts.domains }, (_, d) => `rcpt@${DEST(d + 1)}`),
  };
  const feeds = outboundFeeds({
    kind: opts.feed,
    domains: opts.domains,
    clients: opts.clients,
    http: { port: () => postroomSide.httpPort, content, fromHeader: FROM_HEADER },
    smtp: postfix.submission
      ? {
          postroom: () => postroomTarget,
          postfix: {
            host: "127.0.0.1",
            port: postfix.submission.port,
            setup: { startTls: true, auth: { user: postfix.submission.user, password: postfix.submission.password } },
          },
        }
      : undefined,
  });
  const runPostroomSide = async (count: number) => {
    if (opts.start === "cold") {
      await postroomSide.stop();
      postroomSide = await startSide();
    }
    return runPostroom(postroomSide, count, feeds.postroom(count));
  };
  const runPostfixSide = async (count: number) => {
    if (opts.start === "cold") await postfix.restart();
    return runPostfix(postfixSide, count, feeds.postfix(count));
  };

  const sides: { postfix: BenchSide; postroom: BenchSide } = {
    postfix: {
      label: "postfix",
      run: runPostfixSide,
      server: opts.postfixSigns ? "postfix+opendkim" : "postfix",
      client: opts.feed === "smtp" ? "SMTP feed" : "smtp-source",
      results: [],
    },
    postroom: {
      label: "postroom",
      run: runPostroomSide,
      server: "postroom",
      client: opts.feed === "smtp" ? "SMTP feed" : "API client",
      results: [],
    },
  };

  return {
    message,
    sink,
    dnsQueries,
    postfixDns,
    postfix,
    postfixSigned,
    postroomSigned,
    groups,
    feeds,
    sides,
    /** The Postroom of the runs now (a cold round starts a new one). */
    postroom: () => postroomSide,
  };
}
