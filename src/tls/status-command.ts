// `postroom tls status` runs in its own process beside the server: it opens the store for
// itself (only in ACME mode, where the certificate and the last order failure live there).
import type { Config } from "../config/config.ts";
import { openStore, type Store } from "../store/store.ts";
import { loadConfigured } from "./sources.ts";
import { tlsStatusText } from "./status-text.ts";
import { sqliteTlsStore } from "./tls-store.repo.ts";

export async function tlsStatusCommand(config: Config, nowMs: number): Promise<{ text: string; ok: boolean }> {
  let store: Store | undefined;
  try {
    const loaded = await loadConfigured(config, () => sqliteTlsStore((store ??= openStore(config.dataDir)), () => nowMs), nowMs);
    return tlsStatusText(config, loaded, nowMs);
  } finally {
    store?.close();
  }
}
