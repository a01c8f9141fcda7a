// bench:inbound's set-up (bench/inbound.ts's header says how and why): the DNS server
// with every sender domain's records, the target, the bare pipeline, Postroom (and, with
// --base, the other tree's), and the signed messages; what the rounds run, each server as
// an `InboundSide`.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Child, cpuProfileArgs } from "./child.ts";
import type { InboundOptions } from "./inbound-options.ts";
import { type ConfigParts, inboundAddress, startPostroom, writePostroomConfig } from "./postroom.ts";
import { type SenderDns, startSenderDns } from "./sender-dns.ts";
import { generateSenderKey, type SignedMessage, type SignedMessageSet, signedMessageSet } from "./signed-senders.ts";
import { startTarget } from "./target.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** Steps run at the end, first one first (each step is put in front as its part starts). */
export type CleanupSteps = (() => Promise<unknown> | unknown)[];

/** Postroom (from the tree `root`, this one by default) taking mail in on an ephemeral port, with one address that POSTs to `target`. */
async function startInboundPostroom(workDir: string, dnsServer: string, target: string, profileArgs: string[], root = ROOT) {
  const parts = { inboundListen: "127.0.0.1:0", inbound: "allow_private_targets = true" };
  const { child, httpPort } =
    root === ROOT
      ? await startPostroom(workDir, dnsServer, parts, profileArgs)
      : await startBasePostroom(workDir, dnsServer, parts, profileArgs, root);
  const smtpPort = (await child.waitFor((l) => l.msg === "inbound smtp listening")).port as number;
  const rcpt = await inboundAddress(httpPort, target);
  child.ready();
  return { child, smtpPort, rcpt };
}

/** `bun src/main.ts serve` of the tree `root`, with the config startPostroom writes. */
async function startBasePostroom(workDir: string, dnsServer: string, parts: ConfigParts, profileArgs: string[], root: string) {
  mkdirSync(workDir, { recursive: true });
  const configPath = writePostroomConfig(workDir, dnsServer, parts);
  const child = Child.spawn("postroom (base)", [...profileArgs, "src/main.ts", "serve", "--config", configPath], root);
  const httpPort = (await child.waitFor((l) => l.msg === "http listening")).port as number;
  return { child, httpPort };
}

/** The bare pipeline; with `dnsServer`, it authenticates every message against it (SPF, DKIM, DMARC) as Postroom does. */
async function startBare(target: string, profileArgs: string[], dnsServer: string | null) {
  const dnsArgs = dnsServer ? ["--dns", dnsServer] : [];
  const child = Child.spawn("bare pipeline", [...profileArgs, "bench/bare-pipeline.ts", "--target", target, ...dnsArgs], ROOT);
  const smtpPort = (await child.waitFor((l) => l.msg === "bare smtp listening")).port as number;
  child.ready();
  return { child, smtpPort };
}

/** One server as the rounds see it: where to send, what to send next, and its timed runs' figures. */
export interface InboundSide {
  label: string;
  port: number;
  child: Child;
  /** The target's path its address POSTs to. */
  path: string;
  rcpt: string;
  next: () => SignedMessage;
  /** Per timed run: msg/s, server CPU ms per message, client CPU ms per message. */
  rates: number[];
  cpu: number[];
  client: number[];
}

export interface InboundBench {
  dns: SenderDns;
  target: ReturnType<typeof startTarget>;
  bare: { child: Child };
  postroom: { child: Child };
  base: { child: Child } | null;
  messages: SignedMessageSet;
  signingMs: number;
  sides: { bare: InboundSide; postroom: InboundSide };
  /** (--base) The other tree's Postroom. */
  baseSide: InboundSide | null;
  /** Postroom, then the base if any. */
  postrooms: InboundSide[];
}

/** Starts everything the runs share; each part's stop goes into `cleanup` as soon as it runs. */
export async function setUpInbound(opts: InboundOptions, workDir: string, cleanup: CleanupSteps): Promise<InboundBench> {
  // DNS: each sender domain's SPF, DKIM key and DMARC records, NXDOMAIN for every other name; queries counted.
  const key = generateSenderKey();
  const dns = await startSenderDns(opts.dns, workDir, opts.domains, key);
  cleanup.unshift(() => dns.stop());

  const target = startTarget();
  cleanup.unshift(() => target.server.stop(true));

  const bare = await startBare(target.url("/bare"), cpuProfileArgs(opts.profileDir, "bare-pipeline"), opts.bareAuth ? dns.address : null);
  cleanup.unshift(() => bare.child.stop());
  const postroom = await startInboundPostroom(workDir, dns.address, target.url("/postroom"), cpuProfileArgs(opts.profileDir, "postroom"));
  cleanup.unshift(() => postroom.child.stop());
  const base = opts.baseDir
    ? await startInboundPostroom(
        join(workDir, "base"),
        dns.address,
        target.url("/base"),
        cpuProfileArgs(opts.profileDir, "postroom-base"),
        opts.baseDir,
      )
    : null;
  if (base) cleanup.unshift(() => base.child.stop());

  // Signed once per domain, while both servers wait (To is signed, so after the address exists).
  const signing0 = performance.now();
  const messages = await signedMessageSet(postroom.rcpt, opts.domains, key);
  const signingMs = performance.now() - signing0;
  const sideOf = (label: string, port: number, child: Child, path: string, rcpt = postroom.rcpt): InboundSide => {
    let sent = 0;
    return {
      label,
      port,
      child,
      path,
      rcpt,
      next: () => messages.message(sent++),
      rates: [] as number[],
      cpu: [] as number[],
      client: [] as number[],
    };
  };
  const sides = {
    bare: sideOf("bare pipeline", bare.smtpPort, bare.child, "/bare"),
    postroom: sideOf("postroom", postroom.smtpPort, postroom.child, "/postroom"),
  };
  // (--base) The other tree's Postroom: its own address, the same messages (their To is this one's).
  const baseSide = base ? sideOf("postroom base", base.smtpPort, base.child, "/base", base.rcpt) : null;
  const postrooms = baseSide ? [sides.postroom, baseSide] : [sides.postroom];
  return { dns, target, bare, postroom, base, messages, signingMs, sides, baseSide, postrooms };
}
