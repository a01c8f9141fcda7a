// Who is calling, and may they call this path? Pure decisions over the Authorization
// header; the HTTP layer turns the verdict into 401 or 403 (docs/api.md, Authentication and Errors).
import type { AccountRegistry, Principal } from "./accounts.ts";

/** Who was refused and why, as authenticate.ts knows it. */
export type ForbiddenReason =
  /** A management token (or a session) on another account's path. */
  | "other_account"
  /** An account's API token on E11, which takes the outbound account's key. */
  | "account_token_on_send"
  /** An outbound account's key on a management route. */
  | "send_key_on_management"
  /** An outbound account's key on another outbound account's E11 path. */
  | "other_outbound_account"
  /** A known account token or key on an operator path. */
  | "not_operator"
  /** A token or key of a suspended account (API.md section 10). */
  | "suspended"
  /** A read-scoped token on a write (any method but GET and HEAD). */
  | "read_only";

/** bearerAPIToken: an account's management token. smtpAuth: an outbound account's key (E11). */
export type AuthScheme = "bearerAPIToken" | "smtpAuth";

export type Credential = { type: "bearer"; secret: string } | { type: "basic"; username: string; secret: string };

/** Parses `Authorization: Bearer <t>` or `Basic base64(user:pass)`; null when absent or malformed. */
export function parseAuthorization(header: string | null | undefined): Credential | null {
  if (!header) return null;
  const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(header);
  if (!m) return null;
  const scheme = m[1]!.toLowerCase();
  if (scheme === "bearer") return { type: "bearer", secret: m[2]! };
  if (scheme !== "basic") return null;
  let decoded: string;
  try {
    decoded = Buffer.from(m[2]!, "base64").toString("utf8");
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  if (colon <= 0) return null;
  return { type: "basic", username: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

export type AuthVerdict =
  | { ok: true; principal: Principal }
  | { ok: false; status: 401 }
  /** `reason` says which credential was expected, for the refusal's text. */
  | { ok: false; status: 403; reason: ForbiddenReason };

/**
 * Authenticates the credential, then authorises it for `pathId` (the {accountID} segment)
 * under `scheme`. Wrong or missing credentials are 401; valid credentials of another
 * account, or of the other kind (a sending key on a management route and the reverse), are
 * 403, and so are a suspended account's and a read-scoped token on a `write`.
 */
export function authorize(
  registry: AccountRegistry,
  credential: Credential | null,
  pathId: string,
  scheme: AuthScheme,
  write = false,
): AuthVerdict {
  if (!credential || credential.secret === "") return { ok: false, status: 401 };
  const principal =
    credential.type === "bearer"
      ? registry.principalForSecret(credential.secret)
      : registry.principalForNamedSecret(credential.username, credential.secret);
  if (!principal) return { ok: false, status: 401 };
  const reason = forbiddenReason(principal, pathId, scheme) ?? standingReason(registry, principal, write);
  return reason ? { ok: false, status: 403, reason } : { ok: true, principal };
}

/** Why a known credential may not call `pathId` under `scheme`; null when it may. */
function forbiddenReason(principal: Principal, pathId: string, scheme: AuthScheme): ForbiddenReason | null {
  if (scheme === "bearerAPIToken") {
    if (principal.kind !== "account") return "send_key_on_management";
    return principal.account.id === pathId ? null : "other_account";
  }
  if (principal.kind !== "outbound") return "account_token_on_send";
  return principal.outbound.id === pathId ? null : "other_outbound_account";
}

/** Why the account's standing refuses a call its credential could make otherwise; null when none does. */
export function standingReason(registry: AccountRegistry, principal: Principal, write: boolean): ForbiddenReason | null {
  if (registry.suspended(principal.account.id)) return "suspended";
  if (write && principal.kind === "account" && principal.readOnly) return "read_only";
  return null;
}

const READS = new Set(["GET", "HEAD"]);
/** Whether a method writes, for read-scoped tokens: everything but GET and HEAD. */
export const isWrite = (method: string): boolean => !READS.has(method.toUpperCase());
