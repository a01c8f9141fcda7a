// HTTP requests to user-given URLs through the egress guard: each hop (the URL and
// every redirect) is resolved and checked, then fetched from the checked address with
// the original Host and TLS server name, so certificates are verified for the name.
import type { DnsResolver } from "./dns.ts";
import { checkedAddress, type EgressPolicy } from "./egress.ts";

const FOLLOWED = new Set([301, 302, 307, 308]);

export interface GuardedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** Replayable, so a redirect can send it again: a stream is made anew for each request. */
  body?: string | Uint8Array | (() => ReadableStream<Uint8Array>);
  maxRedirects: number;
  signal: AbortSignal;
  /** Certificate authorities to trust for https (default: the runtime's roots). */
  tlsCa?: string[];
}

export interface GuardedContext {
  resolver: DnsResolver;
  policy: EgressPolicy;
}

export interface GuardedResponse {
  response: Response;
  url: string;
  /**
   * Set when the response is a redirect we refused to follow because it leads off the
   * web (file:, ftp:, data: ...): why, for the caller to record. The body is left unread.
   */
  refusedRedirect?: string;
}

/** Fetches with redirects followed by hand (each one checked); the final response and URL. */
export async function guardedFetch(req: GuardedRequest, ctx: GuardedContext): Promise<GuardedResponse> {
  let url = new URL(req.url);
  let headers = { ...req.headers };
  for (let hop = 0; ; hop++) {
    const ip = await checkedAddress(url.hostname, ctx.resolver, ctx.policy);
    const host = ip.includes(":") ? `[${ip}]` : ip;
    // A URL written with the checked address needs no copy pinned to it, nor a Host
    // header of its own; a name is kept as Host (and as TLS server name) while the
    // request goes to the address checked for it.
    const literal = url.hostname === host;
    const init: RequestInit & { tls?: object } = {
      method: req.method,
      headers: literal ? headers : { ...headers, host: url.host },
      body: typeof req.body === "function" ? req.body() : req.body,
      redirect: "manual",
      signal: req.signal,
    };
    if (url.protocol === "https:") init.tls = { serverName: url.hostname, ...(req.tlsCa ? { ca: req.tlsCa } : {}) };
    const response = await fetch(literal ? url : Object.assign(new URL(url), { hostname: host }), init);
    const location = response.headers.get("location");
    if (!FOLLOWED.has(response.status) || !location || hop >= req.maxRedirects) return { response, url: url.toString() };
    const next = URL.parse(location, url.toString());
    if (next === null) return { response, url: url.toString(), refusedRedirect: "redirect to an unparsable URL refused" };
    if (next.protocol !== "http:" && next.protocol !== "https:")
      return { response, url: url.toString(), refusedRedirect: `redirect to a non-http(s) URL refused (${next.protocol})` };
    await response.body?.cancel();
    // Credentials were meant for the first origin only.
    if (next.origin !== url.origin) {
      const { authorization: _dropped, ...rest } = headers;
      headers = rest;
    }
    url = next;
  }
}

/** Up to `limitBytes` of a response body as text; the rest is discarded unread. */
export async function readBodyPrefix(response: Response, limitBytes: number): Promise<string> {
  if (!response.body) return "";
  // A body announced within the limit is read whole, without a stream reader's overhead
  // (fetch fails the read if the server sends other than the announced length). Not when
  // it is compressed: the announced length is then the compressed one.
  const announced = Number(response.headers.get("content-length") ?? Number.NaN);
  const encoding = response.headers.get("content-encoding");
  if (Number.isSafeInteger(announced) && announced >= 0 && announced <= limitBytes && (encoding === null || encoding === "identity")) {
    return new TextDecoder().decode(await response.arrayBuffer());
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (total < limitBytes) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limitBytes));
}
