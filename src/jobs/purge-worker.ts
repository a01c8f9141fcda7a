// Worker thread entry: runs the retention purge's windows on a database connection of its
// own (purge-thread.ts says why). One request at a time, in order.
import { openStore, type Store } from "../store/store.ts";
import type { Purge } from "../store/purge-window.ts";
import type { RetentionTable } from "./retention.ts";
import { retentionPurges } from "./retention-tables.ts";
import type { PurgeReply, PurgeRequest } from "./purge-thread.ts";

declare const self: Worker;

let opened: { store: Store; purges: Record<RetentionTable, Purge> } | null = null;

self.onmessage = async (event: MessageEvent<PurgeRequest>) => {
  const request = event.data;
  let reply: PurgeReply;
  try {
    if (request.kind === "close") {
      opened?.store.close();
      opened = null;
      reply = { id: request.id, ok: true, step: null };
    } else {
      if (!opened) {
        const store = openStore(request.dataDir);
        opened = { store, purges: retentionPurges(store) };
      }
      const step = await opened.purges[request.table](request.beforeMs, request.afterRowid, request.limit);
      // Here, not in the next commit on the event loop (store.ts, checkpoint).
      if (step.deleted > 0) opened.store.checkpoint();
      reply = { id: request.id, ok: true, step };
    }
  } catch (err) {
    reply = { id: request.id, ok: false, message: (err as Error).message };
  }
  self.postMessage(reply);
};
