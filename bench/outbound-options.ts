// bench:outbound's options (bench/outbound.ts's header says what each one does) and their
// checks: flags, else BENCH_* variables, else the defaults.
import { dirOption, intOption, parseOptions } from "./args.ts";
import type { FeedKind } from "./outbound-feed.ts";

export type OutboundOptions = ReturnType<typeof outboundOptions>;

export function outboundOptions() {
  const values = parseOptions(
    "bun run bench:outbound [--messages N] [--clients C] [--warmup W] [--rounds R] [--route smarthost|mx] [--domains D] [--profile DIR] [--start warm|cold] [--postfix-dkim off|on] [--feed smtp|http]",
    {
      messages: { type: "string", short: "n" },
      clients: { type: "string", short: "c" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      route: { type: "string" },
      domains: { type: "string" },
      profile: { type: "string" },
      start: { type: "string" },
      "postfix-dkim": { type: "string" },
      feed: { type: "string" },
    },
  );
  const messages = intOption(values.messages, "BENCH_MESSAGES", 2000, 1);
  const clients = intOption(values.clients, "BENCH_CLIENTS", 8, 1);
  const warmup = intOption(values.warmup, "BENCH_WARMUP", 1000, 0);
  const rounds = intOption(values.rounds, "BENCH_ROUNDS", 3, 1);
  const domains = intOption(values.domains, "BENCH_DOMAINS", 1, 1);
  const route = values.route ?? process.env.BENCH_ROUTE ?? "smarthost";
  if (route !== "smarthost" && route !== "mx") throw new Error(`--route must be smarthost or mx, got ${route}`);
  const start = values.start ?? process.env.BENCH_START ?? "warm";
  if (start !== "warm" && start !== "cold") throw new Error(`--start must be warm or cold, got ${start}`);
  if (clients > messages) throw new Error(`--clients (${clients}) must not exceed --messages (${messages})`);
  if (start === "warm" && warmup > 0 && clients > warmup) throw new Error(`--clients (${clients}) must not exceed --warmup (${warmup})`);
  const postfixDkim = values["postfix-dkim"] ?? process.env.BENCH_POSTFIX_DKIM ?? "off";
  if (postfixDkim !== "off" && postfixDkim !== "on") throw new Error(`--postfix-dkim must be off or on, got ${postfixDkim}`);
  const feed = values.feed ?? process.env.BENCH_FEED ?? "smtp";
  if (feed !== "smtp" && feed !== "http") throw new Error(`--feed must be smtp or http, got ${feed}`);
  const profileDir = dirOption(values.profile, "BENCH_PROFILE");
  if (start === "cold" && profileDir) throw new Error("--profile needs --start warm (a cold run starts a new Postroom each round)");
  // Cold: every round starts both sides afresh and sends at once, so there is no warm-up.
  return {
    messages,
    clients,
    warmup: start === "cold" ? 0 : warmup,
    rounds,
    domains,
    start: start as "warm" | "cold",
    route: route as "smarthost" | "mx",
    profileDir,
    postfixSigns: postfixDkim === "on",
    feed: feed as FeedKind,
  };
}
