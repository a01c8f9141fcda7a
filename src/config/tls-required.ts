// The keys a TLS mode cannot do without. Checked on the [tls] table as written (with
// defaults filled), even when other keys of the file are wrong, so that check-config
// names every missing key of the mode in one run rather than one per run.
import type { Problem } from "../lib/validation.ts";

const at = (obj: unknown, key: string): unknown =>
  obj !== null && typeof obj === "object" ? (obj as Record<string, unknown>)[key] : undefined;
const blank = (v: unknown) => v === undefined || v === "";

/** Every key `tls.mode` needs that is missing or empty, each with the rule it breaks. */
export function tlsRequiredKeyProblems(tls: unknown): Problem[] {
  const mode = at(tls, "mode");
  const problems: Problem[] = [];
  if (mode === "files") {
    for (const key of ["cert_file", "key_file"])
      if (blank(at(tls, key))) problems.push({ path: `tls.${key}`, message: 'is required when tls.mode is "files"' });
  }
  if (mode === "acme") {
    const acme = at(tls, "acme");
    const domains = at(acme, "domains");
    if (domains === undefined || (Array.isArray(domains) && domains.length === 0))
      problems.push({ path: "tls.acme.domains", message: 'needs at least one name when tls.mode is "acme"' });
    if (blank(at(acme, "challenge_listen")))
      problems.push({ path: "tls.acme.challenge_listen", message: 'is required when tls.mode is "acme"' });
  }
  return problems;
}
