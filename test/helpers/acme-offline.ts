// An appliance in ACME mode whose CA never answers (nothing listens at the directory), for
// tests about the certificate it already has in its store: a start or check that ordered
// would fail and say so in the log ("acme order"). And the serial of what it serves.
import { SmtpSession } from "./smtp-session.ts";

export const acmeWithoutCa = (name: string, checkInterval: string): string => `mode = "acme"
check_interval = "${checkInterval}"
[tls.acme]
directory_url = "https://127.0.0.1:9/directory"
domains = ["${name}"]
challenge_listen = "127.0.0.1:0"`;

/** The serial of the certificate the SMTP listener on `port` offers after STARTTLS for `name`. */
export async function servedSerial(port: number, name: string): Promise<string> {
  const { session } = await SmtpSession.open(port);
  await session.command("EHLO client.postroom.test");
  const peer = await session.startTls(name);
  await session.close();
  return peer.serialNumber;
}
