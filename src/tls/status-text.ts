// `postroom tls status`: what the operator wants to know about the certificate in use,
// as text. Pure over what was loaded, so the format has a table test.
import type { Config } from "../config/config.ts";
import { daysLeft, describeCertificate } from "./certificate.ts";
import type { Loaded } from "./sources.ts";

export function tlsStatusText(config: Config, loaded: Loaded, nowMs: number): { text: string; ok: boolean } {
  const mode = config.tls.mode;
  if (mode === "off") return { text: 'tls.mode is "off": no certificate, STARTTLS not offered', ok: true };
  const source =
    mode === "files"
      ? `${config.tls.certFile} (key ${config.tls.keyFile})`
      : `the store, ${config.dataDir}/postroom.db (ACME: ${config.tls.acme.directoryUrl})`;
  const lines = [`mode:    ${mode}`, `source:  ${source}`];
  const failure = loaded.orderFailure;
  if (failure) {
    lines.push(
      `last order failed at ${new Date(failure.atMs).toISOString()}: ${failure.reason} (next try after ${new Date(failure.retryAtMs).toISOString()})`,
    );
  }
  if (!loaded.material) {
    lines.push(`problem: ${loaded.problem}`);
    return { text: lines.join("\n"), ok: false };
  }
  const info = describeCertificate(loaded.material.cert);
  lines.push(
    `names:   ${info.names.join(", ")}`,
    `issuer:  ${info.issuer}`,
    `serial:  ${info.serial}`,
    `valid:   ${new Date(info.notBeforeMs).toISOString()} to ${new Date(info.notAfterMs).toISOString()} (${daysLeft(info, nowMs)} days left)`,
  );
  if (info.notAfterMs - nowMs < config.tls.expiryWarningMs)
    lines.push(`warning: expires within ${Math.round(config.tls.expiryWarningMs / 86_400_000)} days`);
  return { text: lines.join("\n"), ok: true };
}
