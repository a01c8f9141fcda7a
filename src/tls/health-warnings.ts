// What /healthz warns about the certificate: trouble ahead that does not fail the check
// yet (the listeners still serve the certificate they have).
import { daysLeft } from "./certificate.ts";
import type { TlsStatus } from "./manager.ts";

export function tlsHealthWarnings(
  status: Pick<TlsStatus, "mode" | "certificate" | "problem">,
  expiryWarningMs: number,
  nowMs: number,
): string[] {
  const { certificate, problem } = status;
  const warnings: string[] = [];
  if (certificate && certificate.notAfterMs - nowMs < expiryWarningMs) {
    warnings.push(
      `tls certificate for ${certificate.names.join(", ")} expires in ${daysLeft(certificate, nowMs)} days (${new Date(certificate.notAfterMs).toISOString()})`,
    );
  }
  if (problem && status.mode !== "off") warnings.push(`tls: ${problem}`);
  return warnings;
}
