// Tests of nodes hearing each other's changes by LISTEN/NOTIFY on one PostgreSQL
// (addresses-notify, sending-domains-notify): waiting until a listener has had every notice
// sent before, and cutting a node's listening connection as a network failure would.
import type { SQL } from "bun";
import { eventually } from "./sink.ts";

/**
 * A function that sends a fresh marker on `channel` through `sender` and waits until it is
 * in `heard` (what the listening node received, in order): notices arrive in the order they
 * were committed, so the listener has then had every notice sent before it.
 */
export function noticeSettler(channel: string, timeoutMs: number): (sender: SQL, heard: readonly string[]) => Promise<void> {
  let markers = 0;
  return async (sender, heard) => {
    const marker = `marker_${++markers}`;
    await sender`SELECT pg_notify(${channel}, ${marker})`;
    await eventually(() => heard.includes(marker), timeoutMs, `the listener to hear ${marker}`);
  };
}

/** Terminates every backend that is listening (Bun's listening connections); how many. */
export async function cutListeners(sql: SQL): Promise<number> {
  const cut: { pid: number }[] = await sql`SELECT pg_terminate_backend(pid), pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%'`;
  return cut.length;
}
