// What the cluster tests (test/e2e/cluster*.test.ts) share: the keys every node of a
// cluster has (made once, copied into each node's data_dir, as docs/operations.md says),
// the calls they make to a node, and the message id a delivered message carries.
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ACCOUNT_A } from "./fixtures.ts";

/** The four 32-byte keys in `root`/keys, made before any node starts. */
export function makeClusterKeys(root: string): void {
  mkdirSync(join(root, "keys"), { mode: 0o700 });
  for (const key of ["secrets", "dkim", "tracking", "url-signing"]) {
    writeFileSync(join(root, "keys", `${key}.key`), crypto.getRandomValues(new Uint8Array(32)), { mode: 0o600 });
  }
}

/** A node's data_dir under `root`, holding a copy of the cluster's keys. */
export function nodeDataDir(root: string, name: string): string {
  const dataDir = join(root, name);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  cpSync(join(root, "keys"), join(dataDir, "keys"), { recursive: true });
  return dataDir;
}

/** An API call to the node on `http`, with an account token (ACCOUNT_A's by default). */
export const nodeApi = (http: number, path: string, method = "GET", body?: unknown, token = ACCOUNT_A.token) =>
  fetch(`http://127.0.0.1:${http}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** E11 through the node on `http`: ACCOUNT_A's outbound account, one recipient. */
export const nodeSend = (http: number, to: string, subject: string) =>
  fetch(`http://127.0.0.1:${http}/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACCOUNT_A.smtpKey}`, "content-type": "application/json" },
    body: JSON.stringify({ from: "ann@sender.test", to, subject, plain: subject }),
  });

/** The message id in a delivered message's envelope sender (bounces+<id>-<recipient>@...). */
export const deliveredId = (mailFrom: string) => /^bounces\+([0-9a-f-]{36})-/.exec(mailFrom)?.[1] ?? "";
