// The LocalAttachments contract ({"store": "local"} attachments and kept messages), run on
// both engines: files under data_dir/attachments (LocalAttachmentStore) on SQLite, the blobs
// table (createPgLocalAttachments) on PostgreSQL. Each case fetches the signed URL save()
// returned from the real attachment route (api/attachments.ts) served on loopback: the
// bytes come back unchanged with their name and type; an expired, altered or forged URL is
// 404; the purge deletes only what expired. On PostgreSQL a second node (its own SQL client
// and store, the same url-signing key) opens what the first saved, and a node with another
// key opens nothing.
import { SQL } from "bun";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { attachmentRoutes } from "../../../src/api/attachments.ts";
import { ManualClock } from "../../../src/lib/clock.ts";
import { LocalAttachmentStore } from "../../../src/inbound/attachments/attachment-files.ts";
import type { LocalAttachments } from "../../../src/inbound/attachments/local-attachments.port.ts";
import { createPgLocalAttachments } from "../../../src/inbound/attachments/local-attachments.pg.repo.ts";
import type { MessageAttachment } from "../../../src/inbound/payload/payload.ts";
import { type EngineHandle, STORE_ENGINES, type StoreEngine } from "../../helpers/engines.ts";
import { tempDir } from "../../helpers/tmp.ts";

const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 8);
const NOW_MS = 1_795_000_000_000;
const HOUR_MS = 3_600_000;
// Small, so the purge case needs several statements on PostgreSQL.
const PURGE_BATCH_ROWS = 2;

const attachment = (fileName: string, content: Buffer, contentType = "application/octet-stream"): MessageAttachment => ({
  fileName,
  contentType,
  disposition: "attachment",
  contentId: null,
  content,
});
/** Every byte value, and a NUL-heavy tail: what a text column or an encoding slip would change. */
const BINARY = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.alloc(1000)]);

interface Node {
  store: LocalAttachments;
  server: ReturnType<typeof Bun.serve>;
  close(): Promise<void>;
}

describe.each(STORE_ENGINES)("LocalAttachments on $name", (engine: StoreEngine) => {
  const it = engine.test;
  const clock = new ManualClock(NOW_MS);
  let handle: EngineHandle | undefined;
  const dir = tempDir();
  let nodes: Node[] = [];

  /** A store served by the attachment route on a loopback port, its public URL that server's. */
  const startNode = async (key: Buffer): Promise<Node> => {
    let base = "";
    let client: SQL | undefined;
    let store: LocalAttachments;
    if (handle!.kind === "sqlite") store = new LocalAttachmentStore(dir.path, key, () => base);
    else {
      client = new SQL(handle!.url, { max: 1 });
      store = createPgLocalAttachments(client, { key, publicUrl: () => base, purgeBatchRows: () => PURGE_BATCH_ROWS });
    }
    const routes = attachmentRoutes(store, clock);
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => routes.handle(request) });
    base = `http://127.0.0.1:${server.port}`;
    const node = {
      store,
      server,
      close: async () => {
        server.stop(true);
        await client?.close();
      },
    };
    nodes.push(node);
    return node;
  };
  /** The same URL served by another node's listener (what a load balancer does). */
  const at = (url: string, node: Node): string => {
    const u = new URL(url);
    return `http://127.0.0.1:${node.server.port}${u.pathname}${u.search}`;
  };

  beforeAll(async () => {
    if (engine.available()) handle = await engine.open();
  }, 60_000);
  beforeEach(async () => {
    clock.set(NOW_MS);
    await handle?.clear(["blobs"]);
    rmSync(join(dir.path, "attachments"), { recursive: true, force: true });
    for (const n of nodes) await n.close();
    nodes = [];
  });
  afterAll(async () => {
    for (const n of nodes) await n.close();
    await handle?.close();
    dir.remove();
  });

  it("save gives a signed URL whose GET serves the bytes unchanged, with the file's type and name", async () => {
    const node = await startNode(KEY);
    const url = await node.store.save(attachment("report été.pdf", BINARY, "application/pdf"), clock.nowMs(), HOUR_MS);
    expect(url).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/attachments\/[0-9a-f]{32}\/report%20%C3%A9t%C3%A9\.pdf\?expires=\d+&signature=[0-9a-f]{64}$/,
    );
    const got = await fetch(url);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(BINARY)).toBe(true);
    expect(got.headers.get("content-type")).toBe("application/pdf");
    expect(got.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''report%20%C3%A9t%C3%A9.pdf");
  });

  it("open reads back what save stored (as post-again reads a kept message)", async () => {
    const node = await startNode(KEY);
    const url = new URL(await node.store.save(attachment("m.eml", BINARY, "message/rfc822"), clock.nowMs(), HOUR_MS));
    const [, , id] = url.pathname.split("/");
    const opened = await node.store.open(id!, url.searchParams.get("expires")!, url.searchParams.get("signature")!, clock.nowMs());
    expect(opened && { fileName: opened.fileName, contentType: opened.contentType }).toEqual({
      fileName: "m.eml",
      contentType: "message/rfc822",
    });
    expect(Buffer.from(await opened!.body.arrayBuffer()).equals(BINARY)).toBe(true);
  });

  it("an expired URL is 404, and one with an altered signature, expiry or id is 404 before it expires", async () => {
    const node = await startNode(KEY);
    const url = await node.store.save(attachment("a.bin", BINARY), clock.nowMs(), HOUR_MS);
    const u = new URL(url);
    const signature = u.searchParams.get("signature")!;
    const altered = (change: (v: URL) => void): string => {
      const v = new URL(url);
      change(v);
      return v.toString();
    };
    const forged = [
      altered((v) => v.searchParams.set("signature", (signature[0] === "0" ? "1" : "0") + signature.slice(1))),
      altered((v) => v.searchParams.set("expires", String(Number(u.searchParams.get("expires")) + 3600))),
      altered((v) => (v.pathname = v.pathname.replace(/\/[0-9a-f]{32}\//, `/${"0".repeat(32)}/`))),
      altered((v) => v.searchParams.delete("signature")),
    ];
    for (const f of forged) expect({ url: f, status: (await fetch(f)).status }).toEqual({ url: f, status: 404 });
    expect((await fetch(url)).status).toBe(200);
    clock.advance(HOUR_MS);
    expect((await fetch(url)).status).toBe(404);
  });

  it("purgeExpired deletes only what expired, and says how many", async () => {
    const node = await startNode(KEY);
    const expired = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => node.store.save(attachment(`old${i}.bin`, BINARY), clock.nowMs(), 60_000)),
    );
    const live = await node.store.save(attachment("new.bin", BINARY), clock.nowMs(), 10 * HOUR_MS);
    clock.advance(2 * 60_000);
    expect(await node.store.purgeExpired(clock.nowMs())).toBe(5);
    expect(await node.store.purgeExpired(clock.nowMs())).toBe(0);
    expect((await fetch(live)).status).toBe(200);
    // Gone, not merely expired: back before the expiry, the URLs still find nothing.
    clock.set(NOW_MS);
    for (const url of expired) expect((await fetch(url)).status).toBe(404);
  });

  if (engine.name === "PostgreSQL") {
    it("another node with the same url-signing key serves what one node saved; a node with another key does not", async () => {
      const first = await startNode(KEY);
      const second = await startNode(KEY);
      const stranger = await startNode(OTHER_KEY);
      const url = await first.store.save(attachment("kept.eml", BINARY, "message/rfc822"), clock.nowMs(), HOUR_MS);
      const got = await fetch(at(url, second));
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(BINARY)).toBe(true);
      expect((await fetch(at(url, stranger))).status).toBe(404);
    });
  }
});
