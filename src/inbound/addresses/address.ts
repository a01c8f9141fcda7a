// An address of Postroom (<id>@<inbound domain>): where its mail is posted, in which
// format, where its attachments go, whether POSTs are signed and messages kept
// (docs/receiving.md, Addresses). Stored through addresses.port.ts.
import type { AttachmentStore } from "./attachment-store.ts";
import type { StoredTarget } from "./target-url.ts";

/** docs/receiving.md: the normalised formats, the hosted service's original ones, and the message itself (beyond). */
export const TARGET_FORMATS = ["json+n", "multipart+n", "json", "multipart", "raw", "rfc822"] as const;

export type TargetFormat = (typeof TARGET_FORMATS)[number];

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
  createdAtMs: number;
  updatedAtMs: number;
}
