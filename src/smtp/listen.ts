// Starting and stopping smtp-server listeners (inbound and submission alike).
import type { SMTPServer } from "smtp-server";
import type { ListenAddress } from "../config/units.ts";

/** Listens and returns the bound port (the real one when the config asked for port 0). */
export async function listenSmtp(server: SMTPServer, at: ListenAddress): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.server.once("error", onError);
    server.listen(at.port, at.host, () => {
      server.server.off("error", onError);
      resolve();
    });
  });
  return (server.server.address() as { port: number }).port;
}

/** Stops accepting, lets open sessions finish (up to the server's closeTimeout). */
export function closeSmtp(server: SMTPServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
