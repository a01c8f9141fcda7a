// PostgreSQL LISTEN/NOTIFY for nodes sharing one database: a writer announces a change on a
// channel in the transaction that makes it (pg_notify is delivered on commit, dropped on
// rollback), and every node's listener hears it. Bun's SQL client does the listening
// (sql.listen): one dedicated connection per client, reconnected with backoff when it drops,
// every channel subscribed again. Notices sent while it was down are lost, so a subscriber
// gets `onResubscribe` after each reconnect and must treat it as "anything may have changed".
import type { SQL } from "bun";

export interface ChannelSubscription {
  stop(): Promise<void>;
}

/**
 * Listens on `channel`. Resolves once the server acknowledged the LISTEN. A handler that
 * throws is reported on stderr, not thrown: Bun turns a throwing callback into an uncaught
 * exception, and a bad notice must not stop the process.
 */
export async function subscribe(
  sql: SQL,
  channel: string,
  onMessage: (payload: string) => void,
  onResubscribe: () => void = () => {},
): Promise<ChannelSubscription> {
  const guarded = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      console.error(`postgres channel ${channel}: ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  let first = true;
  const sub = await sql.listen(
    channel,
    (payload) => guarded("handling a notice", () => onMessage(payload)),
    () => {
      // The first acknowledgement is the subscription itself; later ones follow a reconnect.
      if (first) first = false;
      else guarded("resubscribing", onResubscribe);
    },
  );
  return { stop: () => sub.unlisten() };
}

/** Announces `payload` on `channel`; inside a transaction it goes out on commit only. */
export async function notify(sqlOrTx: SQL, channel: string, payload: string): Promise<void> {
  await sqlOrTx`SELECT pg_notify(${channel}, ${payload})`;
}
