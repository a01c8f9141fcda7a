// The dashboard's "send a test POST": a small sample message posted to one address's
// target exactly as a received one would be (its format, credentials, signing, the egress
// guard, the same timeout), but recorded nowhere: no incoming status, no SMTP session. The
// answer says what a sender would have been told.
import { randomBytes } from "node:crypto";
import { formatReply } from "../smtp/reply.ts";
import type { Address } from "./addresses/address.ts";
import { md5Hex, messageKey } from "./post-message.ts";
import { postToAddress } from "./targets/address-post.ts";
import type { PostDeps } from "./transaction.ts";
import type { PayloadEnvelope } from "./payload/payload.ts";
import { verdictFor, type StatusCategory } from "./targets/target-reply.ts";

export interface TestPostResult {
  /** As in an incoming status: the target's HTTP status, client_timeout or unreachable. */
  status: string;
  category: StatusCategory;
  /** The SMTP reply a sender would have got. */
  reply: string;
  /** The target's answer (first bytes) or why there was none, for every non-2xx. */
  response: string | null;
  durationMs: number;
}

/** The sample message: plain text from test@<hostname> to the address, with a fresh Message-ID. */
export function sampleMessage(hostname: string, to: string, nowMs: number): Buffer {
  const id = `${randomBytes(8).toString("hex")}.test@${hostname}`;
  return Buffer.from(
    [
      `From: Postroom test <test@${hostname}>`,
      `To: <${to}>`,
      "Subject: Postroom test POST",
      `Date: ${new Date(nowMs).toUTCString().replace("GMT", "+0000")}`,
      `Message-ID: <${id}>`,
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "This is a test POST sent from the Postroom dashboard. No mail was received.",
      "",
    ].join("\r\n"),
  );
}

/** `email`: the address as mail reaches it (<id>@inbound.domain). */
/** A test POST to an address's target, the post deps bound (what the API calls). */
export type TestPost = (address: Address, email: string) => Promise<TestPostResult>;

export async function sendTestPost(address: Address, email: string, deps: PostDeps): Promise<TestPostResult> {
  const started = performance.now();
  const raw = sampleMessage(deps.hostname, email, deps.clock.nowMs());
  const { content, facts } = await deps.extract(raw, deps.limits, 0);
  const from = `test@${deps.hostname}`;
  const auth = await deps.auth.check(raw, { mailFrom: from, helo: deps.hostname, remoteIp: "127.0.0.1", mta: deps.hostname }, facts);
  const md5 = md5Hex(raw);
  const envelope: PayloadEnvelope = {
    to: email,
    recipients: [email],
    from,
    helo_domain: deps.hostname,
    remote_ip: "127.0.0.1",
    spf: auth.spf,
    tls: false,
    tls_cipher: null,
    md5,
    dkim: auth.dkim,
    dmarc: auth.dmarc,
  };
  const log = deps.logger.child({ component: "inbound", test_post: true });
  const outcome = await postToAddress(
    { address, customDomain: null, rcpts: [email] },
    content,
    envelope,
    messageKey(md5, address.id),
    raw,
    deps,
    log,
  );
  const verdict = verdictFor(outcome);
  log.info("test post", { address_id: address.id, status: verdict.status, reply: formatReply(verdict.reply) });
  return {
    status: verdict.status,
    category: verdict.category,
    reply: formatReply(verdict.reply),
    response: verdict.response,
    durationMs: Math.round(performance.now() - started),
  };
}
