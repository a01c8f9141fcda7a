// Plain HTTP on tls.acme.challenge_listen (port 80 in production): ACME HTTP-01 answers,
// and for everything else a redirect to the HTTPS API (or 404 when the API is not on HTTPS).
import type { ListenAddress } from "../config/units.ts";
import { plainHttpAnswer, type ChallengeResponder } from "./challenges.ts";

export function listenForChallenges(
  at: ListenAddress,
  responder: ChallengeResponder,
  httpsBase: () => string | null,
): ReturnType<typeof Bun.serve> {
  return Bun.serve({
    hostname: at.host,
    port: at.port,
    maxRequestBodySize: 64 * 1024,
    fetch(req) {
      const url = new URL(req.url);
      return responder.answer(url.pathname) ?? plainHttpAnswer(url, httpsBase());
    },
  });
}
