// Posting a message to one address: its attachments (and the message itself, when the
// address keeps messages) stored locally or in S3, the body in the address's format, the
// POST to its target. Apart from post-message.ts, which runs it for every address; the
// test post (test-post.ts) runs it alone.
import { isDiskFull } from "../../lib/disk-full.ts";
import type { Logger } from "../../lib/logger.ts";
import { replaceNulInFields } from "../../lib/stored-text.ts";
import type { Address } from "../addresses/address.ts";
import { uploadToS3 } from "../attachments/attachment-s3.ts";
import type { MessageAttachment, MessageContent, PayloadEnvelope } from "../payload/payload.ts";
import type { AddressGroup, PostDeps } from "../transaction.ts";
import { targetBody } from "./target-body.ts";
import { postToTarget } from "./target-post.ts";
import type { TargetOutcome } from "./target-reply.ts";

/** `raw`: the message as the sender sent it (the raw and rfc822 formats post it). */
/** The target's outcome, and the stored message's URL when the address keeps messages. */
export async function postToAddress(
  group: AddressGroup,
  content: MessageContent,
  envelope: PayloadEnvelope,
  key: string,
  raw: Buffer,
  deps: PostDeps,
  log: Logger,
): Promise<TargetOutcome & { storeUrl?: string; envelope?: string }> {
  const store = group.address.attachments;
  // raw and rfc822 post the message itself: its attachments are not stored apart.
  const format = group.address.targetFormat;
  const apart = format === "raw" || format === "rfc822" ? [] : content.attachments;
  let urls: (string | null)[];
  try {
    urls = await Promise.all(apart.map((a) => (store.store === "local" || store.store === "s3" ? keep(group.address, a, deps) : null)));
    // (beyond) The message itself, kept where the address keeps attachments (locally when it keeps none).
    if (group.address.storeMessages) {
      const fileName = `${envelope.md5}.eml`;
      envelope = {
        ...envelope,
        store_url: await keep(
          group.address,
          { fileName, contentType: "message/rfc822", disposition: "attachment", contentId: null, content: raw },
          deps,
        ),
      };
    }
  } catch (err) {
    if (store.store === "s3") return { kind: "unreachable", reason: `attachment store failed: ${(err as Error).message}` };
    // Our own disk: the details (paths) go to the log, not to the sender or the status.
    const diskFull = isDiskFull(err);
    if (diskFull) deps.diskFull.report("local attachments", err);
    else log.error("local attachment store failed", { err, address_id: group.address.id });
    return { kind: "local_failure", diskFull };
  }
  const body = await targetBody({ format: group.address.targetFormat, content, envelope, urls, raw });
  const target = group.customDomain?.domainTarget ?? group.address.target;
  const outcome = await postToTarget(
    { target, body, messageKey: key, signingSecret: group.address.signingSecret, nowMs: deps.clock.nowMs() },
    deps.post,
  );
  // A kept message keeps its envelope too: with both, the payload posted can be shown again.
  return envelope.store_url ? { ...outcome, storeUrl: envelope.store_url, envelope: JSON.stringify(envelope) } : outcome;
}

/** Stores a file in the address's S3 store, or locally; returns its signed URL. */
function keep(address: Address, file: MessageAttachment, deps: PostDeps): Promise<string> {
  const store = address.attachments;
  if (store.store === "s3")
    return uploadToS3(store, file, {
      nowMs: deps.clock.nowMs(),
      ttlMs: deps.attachmentUrlTtlMs,
      resolver: deps.resolver,
      policy: deps.post.policy,
      timeoutMs: deps.post.timeoutMs,
    });
  // Its name and type are stored (and its name is in the URL): NUL replaced (stored-text.ts).
  return deps.localAttachments.save(replaceNulInFields(file), deps.clock.nowMs(), deps.attachmentUrlTtlMs);
}
