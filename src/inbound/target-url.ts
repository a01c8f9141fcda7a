// Target URLs carry their Basic credentials inline (https://user:pass@host/path,
// URL-encoded). We call the URL without them, send them as Authorization: Basic, and
// never show the password again (API.md section 6, Address).
import { isHttpUrl } from "../lib/formats.ts";

export const MASKED_SECRET = "***";
export const TARGET_MAX_LENGTH = 2048;

export interface TargetCall {
  /** The URL to POST to, credentials removed. */
  url: string;
  /** Value of the Authorization header, when the URL carried credentials. */
  authorization: string | null;
}

/** Why `value` cannot be a target, or null when it can. */
export function targetProblem(value: string): string | null {
  if (value.length > TARGET_MAX_LENGTH) return `must be at most ${TARGET_MAX_LENGTH} characters`;
  if (/[\u0000-\u001f\u007f\s]/.test(value)) return "must not contain spaces or control characters";
  if (!isHttpUrl(value)) return "must be an http or https URL";
  return null;
}

export function targetCall(stored: string): TargetCall {
  const url = new URL(stored);
  if (url.username === "" && url.password === "") return { url: url.toString(), authorization: null };
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  url.username = "";
  url.password = "";
  return { url: url.toString(), authorization: "Basic " + Buffer.from(`${user}:${pass}`, "utf8").toString("base64") };
}

/** The target as responses show it: the password replaced by ***. */
export function maskTarget(stored: string): string {
  const url = new URL(stored);
  if (url.password !== "") url.password = MASKED_SECRET;
  return url.toString();
}

const isMask = (password: string) => password === MASKED_SECRET || password === encodeURIComponent(MASKED_SECRET);

/**
 * A client that reads an address and writes it back sends the masked password. Keep the
 * stored password then, provided the rest of the URL is unchanged. Returns null when the
 * mask arrives and there is nothing to restore it from: the caller refuses that (422).
 */
export function restoreMaskedPassword(incoming: string, stored: string | null): string | null {
  const next = new URL(incoming);
  if (!isMask(next.password)) return incoming;
  if (stored === null) return null;
  const prev = new URL(stored);
  const prevPassword = prev.password;
  next.password = "";
  prev.password = "";
  if (next.toString() !== prev.toString() || prevPassword === "") return null;
  next.password = prevPassword;
  return next.toString();
}
