// Gives a running smtp-server a certificate: new STARTTLS upgrades and implicit-TLS
// connections use it, sessions already open keep theirs. A listener that started
// without one begins to offer STARTTLS here.
import type { SMTPServer } from "smtp-server";
import type { TlsMaterial } from "./certificate.ts";

interface ServerInternals {
  options: { hideSTARTTLS?: boolean; disabledCommands: string[] };
  updateSecureContext(options: { key: string; cert: string }): void;
}

export function useCertificate(server: SMTPServer, material: TlsMaterial, offerStarttls: boolean): void {
  const internals = server as unknown as ServerInternals;
  internals.updateSecureContext({ key: material.key, cert: material.cert });
  if (!offerStarttls) return;
  internals.options.hideSTARTTLS = false;
  internals.options.disabledCommands = internals.options.disabledCommands.filter((c) => c !== "STARTTLS");
}
