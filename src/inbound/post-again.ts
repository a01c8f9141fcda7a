// (beyond) "Post again": a kept message (an address with store_messages) posted to its
// address's target once more, as if it had just been received from the same sender: the
// same pipeline, a new incoming status, the target's answer. Read back from where it was
// kept: the appliance's disk through its own signed URL, or the address's S3 store through
// the presigned URL and the egress guard.
import { guardedFetch } from "../lib/egress-fetch.ts";
import { newId16 } from "../lib/ids.ts";
import { formatReply } from "../smtp/reply.ts";
import type { Address } from "./addresses/address.ts";
import { ATTACHMENT_PATH_PREFIX } from "./attachments/attachment-url.ts";
import { postMessage } from "./post-message.ts";
import type { PostDeps } from "./transaction.ts";
import type { IncomingStatus } from "./statuses/incoming-status.ts";
import { headerFields, payloadView, type HeaderField, type PayloadView } from "./kept-message.ts";
import type { PayloadEnvelope } from "./payload/payload.ts";

export interface PostAgainDeps extends PostDeps {
  /** Where this appliance's own URLs start (http.public_url). */
  publicUrl: string;
  /** The largest message read back (smtp.max_message_size). */
  maxBytes: number;
}

/** The kept message behind `url`, or null when it is gone (expired, deleted, or never ours). */
export async function readKeptMessage(url: string, deps: PostAgainDeps): Promise<Buffer | null> {
  const u = new URL(url);
  const own = new URL(deps.publicUrl);
  const local = new RegExp(`^${ATTACHMENT_PATH_PREFIX}/([0-9a-f]{32})/`).exec(u.pathname);
  if (u.origin === own.origin && local) {
    const file = await deps.localAttachments.open(
      local[1]!,
      u.searchParams.get("expires") ?? "",
      u.searchParams.get("signature") ?? "",
      deps.clock.nowMs(),
    );
    // Read without holding the event loop: a kept message may be as large as smtp.max_message_size.
    return file ? Buffer.from(await file.body.arrayBuffer()) : null;
  }
  const { response } = await guardedFetch(
    {
      url,
      method: "GET",
      headers: { "user-agent": deps.post.userAgent },
      maxRedirects: 0,
      signal: AbortSignal.timeout(deps.post.timeoutMs),
    },
    { resolver: deps.resolver, policy: deps.post.policy },
  );
  if (response.status !== 200) return null;
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > deps.maxBytes) return null;
  const bytes = Buffer.from(await response.arrayBuffer());
  return bytes.byteLength > deps.maxBytes ? null : bytes;
}

/** Posts `raw` (the kept message of `status`) to `address` again; returns the SMTP reply a sender would get now. */
export async function postAgain(raw: Buffer, status: IncomingStatus, address: Address, deps: PostDeps): Promise<string> {
  const id = newId16();
  const reply = await postMessage(
    raw,
    {
      id,
      log: deps.logger.child({ component: "inbound", message_id: id, from: status.mailFrom }),
      mailFrom: status.mailFrom,
      // Our Received line says where this copy comes from.
      helo: "post-again.postroom",
      ehlo: false,
      remoteIp: status.remoteIp ?? "127.0.0.1",
      tls: null,
      authenticated: false,
      groups: [{ address, customDomain: null, rcpts: [status.rcptTo] }],
      bounceRcpts: [],
      accepted: [{ rcpt: status.rcptTo, accountId: address.accountId }],
    },
    deps,
  );
  return formatReply(reply);
}

/** The kept message's header fields, and the payload its address's target was posted. */
export async function viewKept(raw: Buffer, status: IncomingStatus, address: Address, deps: PostDeps): Promise<KeptView> {
  const headers = headerFields(raw);
  if (!status.envelope) return { headers, payload: null };
  // A message that cannot be parsed now (a limit lowered since) is shown as it is.
  const extracted = await deps.extract(raw, deps.limits, 0).catch(() => null);
  return { headers, payload: payloadView(address.targetFormat, raw, extracted, JSON.parse(status.envelope) as PayloadEnvelope) };
}

/** `payload`: null for a status kept without its envelope. */
export interface KeptView {
  headers: HeaderField[];
  payload: PayloadView | null;
}

export interface KeptMessages {
  read(url: string): Promise<Buffer | null>;
  view(raw: Buffer, status: IncomingStatus, address: Address): Promise<KeptView>;
  postAgain(raw: Buffer, status: IncomingStatus, address: Address): Promise<string>;
}

/** Reading back and posting again, with the post deps and the config of the moment. */
export function keptMessages(
  postDeps: () => PostDeps,
  config: () => { http: { publicUrl: string }; smtp: { maxMessageSizeBytes: number } },
): KeptMessages {
  return {
    read: (url) => readKeptMessage(url, { ...postDeps(), publicUrl: config().http.publicUrl, maxBytes: config().smtp.maxMessageSizeBytes }),
    view: (raw, status, address) => viewKept(raw, status, address, postDeps()),
    postAgain: (raw, status, address) => postAgain(raw, status, address, postDeps()),
  };
}
