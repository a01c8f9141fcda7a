// HTTP-01 challenge answers (RFC 8555 section 8.3): the CA fetches
// http://<name>/.well-known/acme-challenge/<token> and expects the key authorization.
// The same responder serves the dedicated challenge listener and the main HTTP listener.
// Answers are kept in the store, so the node the CA reaches answers for an order any node
// on the same database placed.
import type { TlsStore } from "./tls-store.port.ts";

export const CHALLENGE_PREFIX = "/.well-known/acme-challenge/";

export class ChallengeResponder {
  constructor(private readonly store: TlsStore) {}

  set(token: string, keyAuthorization: string): Promise<void> {
    return this.store.setChallenge(token, keyAuthorization);
  }

  delete(token: string): Promise<void> {
    return this.store.deleteChallenge(token);
  }

  /**
   * The answer to a challenge request, or null (at once, no store read) when the path is
   * not a challenge, so every other request goes on without waiting.
   */
  answer(pathname: string): Promise<Response> | null {
    if (!pathname.startsWith(CHALLENGE_PREFIX)) return null;
    return this.store
      .challenge(pathname.slice(CHALLENGE_PREFIX.length))
      .then((keyAuthorization) =>
        keyAuthorization === null
          ? new Response("no such challenge\n", { status: 404, headers: { "content-type": "text/plain" } })
          : new Response(keyAuthorization, { headers: { "content-type": "application/octet-stream" } }),
      );
  }
}

/**
 * What plain HTTP answers besides challenges: with the API on HTTPS, a permanent redirect
 * to the same path there (308 keeps the method and body); otherwise nothing lives here.
 */
export function plainHttpAnswer(url: URL, httpsBase: string | null): Response {
  if (httpsBase === null) return new Response("not found\n", { status: 404, headers: { "content-type": "text/plain" } });
  return new Response(null, { status: 308, headers: { location: `${httpsBase}${url.pathname}${url.search}` } });
}
