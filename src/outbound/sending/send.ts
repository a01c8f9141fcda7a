// Sending a message for an outbound account, the one path both the API (E11) and SMTP
// submission take: compose (API) or take the raw message (SMTP), check the size, queue.
import type { AccountConfig, Config, OutboundAccountConfig } from "../../config/config.ts";
import type { Clock } from "../../lib/clock.ts";
import { newUuid } from "../../lib/ids.ts";
import type { Logger } from "../../lib/logger.ts";
import { domainOf, type MailAddress } from "../compose/addresses.ts";
import { composeMessage } from "../compose/compose.ts";
import type { SharedComposer } from "../compose/shared-compose.ts";
import { blockedAttachmentOf } from "../compose/raw-attachments.ts";
import { enqueueMessage, type EnqueueDeps, type EnqueueRequest, type RememberedAnswer } from "../queue/enqueue.ts";
import type { IdempotencyRepo } from "./idempotency.port.ts";
import { draftFromBody, InputProblem, type MessageBody } from "../compose/message-input.ts";
import type { OutboundRepo } from "../queue/queue.port.ts";
import type { OutboundMessage } from "../queue/message.ts";
import type { Tracking } from "../tracking/personalize.ts";
import type { SenderDomains } from "./sender-domains.ts";
import { webhookConfigured } from "../queue/webhook-configured.ts";

export interface SendDeps {
  repo: OutboundRepo;
  suppressed(outboundAccountId: string, emails: readonly string[]): Promise<Set<string>>;
  clock: Clock;
  domains: SenderDomains;
  config(): Config;
  notify(): void;
  /** Idempotency keys of E11 and Message-IDs of submitted messages. */
  idempotency: IdempotencyRepo;
}

export interface Sender {
  account: AccountConfig;
  outbound: OutboundAccountConfig;
}

export const enqueueDeps = (deps: SendDeps): EnqueueDeps => {
  const config = deps.config();
  return { ...deps, digestIntervalMs: config.outbound.digestIntervalMs, webhookConfigured: (id) => webhookConfigured(config.accounts, id) };
};

/** The account's tracking and unsubscribe settings, fixed on the message when it is accepted. */
const trackingOf = (sender: Sender): Tracking => ({
  opens: sender.account.tracking.opens,
  clicks: sender.account.tracking.clicks,
  unsubscribe: sender.account.unsubscribe,
});

/**
 * Why one of the other mailboxes a message names in From or Sender may not be used by this
 * account, or null: the author's domain is checked first, the others must pass the same check.
 */
async function namedRefusal(
  deps: SendDeps,
  accountId: string,
  author: MailAddress,
  named: readonly MailAddress[],
  testMode: boolean,
): Promise<string | null> {
  const checked = new Set([domainOf(author.address)]);
  for (const a of named) {
    const domain = domainOf(a.address);
    if (checked.has(domain)) continue;
    checked.add(domain);
    const refusal = await deps.domains.refusal(accountId, domain, testMode);
    if (refusal) return `the message also names ${a.address}: ${refusal}`;
  }
  return null;
}

/** Why a raw message may not go out because of an attachment's name, or null (raw-attachments.ts). */
function attachmentRefusal(raw: Buffer, blocked: readonly string[]): string | null {
  const found = blockedAttachmentOf(raw, blocked);
  if (!found) return null;
  const name = found.fileName.length > 100 ? `${found.fileName.slice(0, 100)}...` : found.fileName;
  return `an attachment is named ${JSON.stringify(name)}: files ending in .${found.extension} are not allowed`;
}

/**
 * Queues the message and logs it: its id (E11's `id`, submission's "Queued as:"), sender,
 * every envelope recipient and Message-ID, so that its delivery lines can be followed by it.
 */
export function logQueued(m: OutboundMessage, req: EnqueueRequest, log: Logger, source: "api" | "submission"): void {
  const to = [...req.to, ...req.cc, ...req.bcc].map((a) => a.address).join(", ");
  log.info("outbound message queued", {
    message_id: m.id,
    message_id_header: m.messageId,
    from: m.from,
    to,
    outbound_account_id: m.outboundAccountId,
    source,
    test_mode: m.testMode,
    ...(m.sendAtMs ? { send_at: new Date(m.sendAtMs).toISOString() } : {}),
  });
}

async function enqueueLogged(req: EnqueueRequest, deps: SendDeps, log: Logger, source: "api" | "submission"): Promise<OutboundMessage> {
  const m = await enqueueMessage(req, enqueueDeps(deps));
  logQueued(m, req, log, source);
  return m;
}

function checkSize(raw: Buffer, maxBytes: number): void {
  if (raw.length > maxBytes)
    throw new InputProblem({ path: "message", message: `is ${raw.length} bytes; at most ${maxBytes} bytes are allowed` });
}

/** E11: a request body becomes a queued message (or an InputProblem for a 422); `remember`: its claimed Idempotency-Key. */
export async function sendFromApi(
  sender: Sender,
  body: MessageBody,
  deps: SendDeps,
  log: Logger,
  remember?: RememberedAnswer,
): Promise<OutboundMessage> {
  return enqueueLogged({ ...(await apiRequestOf(sender, body, deps)), remember }, deps, log, "api");
}

/** What E11's body asks to queue, checked and composed (an InputProblem for a 422); nothing is stored yet. */
export async function apiRequestOf(sender: Sender, body: MessageBody, deps: SendDeps, composer?: SharedComposer): Promise<EnqueueRequest> {
  const config = deps.config();
  const draft = draftFromBody(body, {
    maxRecipients: config.outbound.maxRecipients,
    blockedExtensions: config.outbound.blockedExtensions,
    markdownAllowed: sender.account.markdown,
    forcedTestMode: sender.account.testMode || sender.outbound.testMode,
    nowMs: deps.clock.nowMs(),
    maxSendAheadMs: config.outbound.maxSendAheadMs,
  });
  // The decoded attachments are the copy from now on: the request's Base64 text (a third
  // larger than they are) is let go before the message is composed (issue 15).
  for (const a of body.attachments ?? []) a.content = "";
  const refusal = await deps.domains.refusal(sender.account.id, domainOf(draft.from.address), draft.testMode);
  if (refusal) throw new InputProblem({ path: "from", message: refusal });
  const id = newUuid();
  const date = new Date(deps.clock.nowMs());
  // A batch's messages of one content share its composition (shared-compose.ts).
  const composed = await (composer ?? { compose: composeMessage }).compose(draft, `<${id}@${config.hostname}>`, date);
  checkSize(composed.raw, config.outbound.maxSizeBytes);
  const alsoNamed = await namedRefusal(deps, sender.account.id, draft.from, composed.named ?? [], draft.testMode);
  if (alsoNamed) throw new InputProblem({ path: "raw", message: alsoNamed });
  const blockedName = draft.raw === null ? null : attachmentRefusal(composed.raw, config.outbound.blockedExtensions);
  if (blockedName) throw new InputProblem({ path: "raw", message: blockedName });
  return {
    id,
    accountId: sender.account.id,
    outboundAccountId: sender.outbound.id,
    from: draft.from,
    to: draft.to,
    cc: draft.cc,
    bcc: draft.bcc,
    subject: composed.subject,
    messageId: composed.messageId,
    tags: draft.tags,
    priority: draft.priority,
    testMode: draft.testMode,
    tracking: trackingOf(sender),
    raw: composed.raw,
    sendAtMs: draft.sendAtMs,
    metadata: draft.metadata,
  };
}

/** What SMTP submission queues: the request to the queue, less what the sender decides (account, test mode, tracking). */
export interface SubmittedMessage extends Omit<EnqueueRequest, "id" | "accountId" | "outboundAccountId" | "testMode" | "tracking"> {
  id: string;
  /** Every mailbox the From, Sender, Resent-From and Resent-Sender fields name (`from`, the one responsible, among them). */
  named?: MailAddress[];
}

/** Thrown when the From domain may not send: SMTP answers 550 5.7.1 with the reason. */
export class SenderRefused extends Error {
  override name = "SenderRefused";
}

/** Thrown when the message carries what may not be sent (a blocked attachment): SMTP answers 554 5.7.1 with the reason. */
export class ContentRefused extends Error {
  override name = "ContentRefused";
}

/** SMTP submission: the client's message as it came (our headers already applied). */
export async function sendFromSmtp(sender: Sender, m: SubmittedMessage, deps: SendDeps, log: Logger): Promise<OutboundMessage> {
  checkSize(m.raw, deps.config().outbound.maxSizeBytes);
  const testMode = sender.account.testMode || sender.outbound.testMode;
  const refusal = await deps.domains.refusal(sender.account.id, domainOf(m.from.address), testMode);
  if (refusal) throw new SenderRefused(refusal);
  const alsoNamed = await namedRefusal(deps, sender.account.id, m.from, m.named ?? [], testMode);
  if (alsoNamed) throw new SenderRefused(alsoNamed);
  const blockedName = attachmentRefusal(m.raw, deps.config().outbound.blockedExtensions);
  if (blockedName) throw new ContentRefused(blockedName);
  const { named: _named, ...message } = m;
  return enqueueLogged(
    { ...message, accountId: sender.account.id, outboundAccountId: sender.outbound.id, testMode, tracking: trackingOf(sender) },
    deps,
    log,
    "submission",
  );
}
