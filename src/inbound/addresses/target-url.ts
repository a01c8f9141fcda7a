// Target URLs carry their Basic credentials inline (https://user:pass@host/path,
// URL-encoded). We keep the password apart from the URL, call the URL without
// credentials, send them as Authorization: Basic, and never show the password again
// (docs/receiving.md, Addresses).
import { isIP } from "node:net";
import { privateAddress } from "../../http/refusals.ts";
import { classifyIp, egressProblem } from "../../lib/egress.ts";
import { isHttpUrl } from "../../lib/formats.ts";

export const MASKED_SECRET = "***";
export const TARGET_MAX_LENGTH = 2048;

/** A target as stored: the URL with its user name but without the password. */
export interface StoredTarget {
  url: string;
  password: string | null;
}

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

/**
 * A target written as an IP literal can be judged at once; names are judged by the
 * egress guard at delivery time, when they are resolved.
 */
export function targetAddressProblem(value: string, allowPrivate: boolean): string | null {
  const host = new URL(value).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0) return null;
  const problem = egressProblem(host, { allowPrivate });
  if (!problem) return null;
  // Only private addresses have a key that allows them; metadata and unusable ones never do.
  return privateAddress(problem, host, classifyIp(host) === "private" ? "inbound.allow_private_targets" : null);
}

const isMask = (password: string) => password === MASKED_SECRET || password === encodeURIComponent(MASKED_SECRET);

/** Splits a target as given into the stored form. */
export function splitTarget(input: string): StoredTarget {
  const url = new URL(input);
  const password = url.password === "" ? null : decodeURIComponent(url.password);
  url.password = "";
  return { url: url.toString(), password };
}

// Calls of the targets in use, kept with the stored target they came from (addresses
// are cached for routing, so the same object comes back message after message).
const calls = new WeakMap<StoredTarget, TargetCall>();

export function targetCall(t: StoredTarget): TargetCall {
  let call = calls.get(t);
  if (call === undefined) calls.set(t, (call = Object.freeze(buildCall(t))));
  return call;
}

function buildCall(t: StoredTarget): TargetCall {
  const url = new URL(t.url);
  if (url.username === "" && t.password === null) return { url: url.toString(), authorization: null };
  const user = decodeURIComponent(url.username);
  url.username = "";
  return { url: url.toString(), authorization: "Basic " + Buffer.from(`${user}:${t.password ?? ""}`, "utf8").toString("base64") };
}

/** The target as responses show it: the password replaced by ***. */
export function maskTarget(t: StoredTarget): string {
  if (t.password === null) return t.url;
  const url = new URL(t.url);
  url.password = MASKED_SECRET;
  return url.toString();
}

/**
 * A client that reads an address and writes it back sends the masked password. Keep the
 * stored password then, provided the rest of the URL is unchanged. Returns null when the
 * mask arrives and there is nothing to restore it from: the caller refuses that (422).
 */
export function resolveTarget(input: string, stored: StoredTarget | null): StoredTarget | null {
  const url = new URL(input);
  if (!isMask(url.password)) return splitTarget(input);
  url.password = "";
  if (stored === null || stored.password === null || url.toString() !== stored.url) return null;
  return { url: url.toString(), password: stored.password };
}
