// The `attachments` object of an address: where attachments of received mail go.
// {} embeds them Base64 in the payload; {"store": "local"} keeps them on the appliance
// behind signed, expiring URLs; {"store": "s3", ...} uploads them to S3-compatible storage.
import { isHttpUrl } from "../../lib/formats.ts";
import type { Problem } from "../../lib/validation.ts";
import { MASKED_SECRET, targetAddressProblem } from "./target-url.ts";

export interface AttachmentStore {
  store?: "local" | "s3";
  bucket?: string;
  path_prefix?: string;
  region?: string;
  endpoint?: string;
  access_key_id?: string;
  secret_access_key?: string;
}

const S3_FIELDS = ["bucket", "path_prefix", "region", "endpoint", "access_key_id", "secret_access_key"] as const;
const S3_REQUIRED = ["bucket", "region", "access_key_id", "secret_access_key"] as const;

/**
 * Rules the schema cannot say: which fields each store needs or forbids. An endpoint
 * written as an IP address is judged at once, as a target is (private ones only when
 * `allowPrivateEndpoints`, metadata ones never); a name is judged at each upload.
 */
export function attachmentStoreProblems(a: AttachmentStore, allowPrivateEndpoints = false): Problem[] {
  const problems: Problem[] = [];
  if (a.store === "s3") {
    for (const f of S3_REQUIRED) if (!a[f]) problems.push({ path: `attachments.${f}`, message: 'is required with store "s3"' });
    if (a.bucket && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(a.bucket))
      problems.push({ path: "attachments.bucket", message: "must be a valid S3 bucket name" });
    if (a.endpoint && !isHttpUrl(a.endpoint)) problems.push({ path: "attachments.endpoint", message: "must be an http or https URL" });
    else if (a.endpoint) {
      const refused = targetAddressProblem(a.endpoint, allowPrivateEndpoints);
      if (refused) problems.push({ path: "attachments.endpoint", message: refused });
    }
    if (a.path_prefix && /[\u0000-\u001f\u007f]/.test(a.path_prefix))
      problems.push({ path: "attachments.path_prefix", message: "must not contain control characters" });
  } else {
    for (const f of S3_FIELDS)
      if (a[f] !== undefined) problems.push({ path: `attachments.${f}`, message: 'is only allowed with store "s3"' });
  }
  return problems;
}

/** The object as responses show it: the secret key replaced by ***. */
export function maskAttachmentStore(a: AttachmentStore): AttachmentStore {
  return a.secret_access_key ? { ...a, secret_access_key: MASKED_SECRET } : { ...a };
}

/** A written-back masked secret keeps the stored one; null when there is none to keep. */
export function restoreMaskedAttachmentSecret(incoming: AttachmentStore, stored: AttachmentStore | null): AttachmentStore | null {
  if (incoming.secret_access_key !== MASKED_SECRET) return incoming;
  if (!stored?.secret_access_key) return null;
  return { ...incoming, secret_access_key: stored.secret_access_key };
}
