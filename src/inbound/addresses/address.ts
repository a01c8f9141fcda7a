// An address of Postroom (<id>@<inbound domain>): where its mail is posted, in which
// format, where its attachments go, whether POSTs are signed and messages kept
// (docs/receiving.md, Addresses). Stored through addresses.port.ts.
import type { AttachmentStore } from "./attachment-store.ts";
import type { StoredTarget } from "./target-url.ts";

/** docs/receiving.md: the normalised formats, the hosted service's original ones, and the message itself (beyond). */
export const TARGET_FORMATS = ["json+n", "multipart+n", "json", "multipart", "raw", "rfc822"] as const;

export type TargetFormat = (typeof TARGET_FORMATS)[number];

/** (beyond) What a 5xx, a timeout or an unreachable target does to the mail: 451 (the sender retries) or kept and posted again by Postroom. */
export const TARGET_FAILURE_MODES = ["defer", "queue"] as const;

export type TargetFailureMode = (typeof TARGET_FAILURE_MODES)[number];

export interface Address {
  id: string;
  accountId: string;
  target: StoredTarget;
  targetFormat: TargetFormat;
  nickname: string | null;
  attachments: AttachmentStore;
  /** Standard Webhooks secret ("whsec_..."), or null when POSTs are not signed. */
  signingSecret: string | null;
  /** (beyond) Keep each received message in the attachment store; its URL goes out as envelope.store_url. */
  storeMessages?: boolean;
  /** (beyond) "defer" (the default) or "queue" (docs/receiving.md, When the target is down). */
  onTargetFailure?: TargetFailureMode;
  /** (beyond) A SpamAssassin score above which mail is refused (550 5.7.1); null = never. */
  spamThreshold?: number | null;
  createdAtMs: number;
  updatedAtMs: number;
}
