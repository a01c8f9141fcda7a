// HTTP-01 challenge answers (RFC 8555 section 8.3): the CA fetches
// http://<name>/.well-known/acme-challenge/<token> and expects the key authorization.
// The same responder serves the dedicated challenge listener and the main HTTP listener.

export const CHALLENGE_PREFIX = "/.well-known/acme-challenge/";

export class ChallengeResponder {
  private readonly answers = new Map<string, string>();

  set(token: string, keyAuthorization: string): void {
    this.answers.set(token, keyAuthorization);
  }

  delete(token: string): void {
    this.answers.delete(token);
  }

  /** The answer to a challenge request, or null when the path is not a challenge. */
  answer(pathname: string): Response | null {
    if (!pathname.startsWith(CHALLENGE_PREFIX)) return null;
    const keyAuthorization = this.answers.get(pathname.slice(CHALLENGE_PREFIX.length));
    if (keyAuthorization === undefined) return new Response("no such challenge\n", { status: 404, headers: { "content-type": "text/plain" } });
    return new Response(keyAuthorization, { headers: { "content-type": "application/octet-stream" } });
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
