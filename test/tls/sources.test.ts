// The ACME certificate as loadConfigured reads it from the store: when its key cannot be
// opened (data_dir/keys/secrets.key replaced, as after a restore without keys/), it is
// reported as a problem with its reason, so the manager orders a new one instead of
// failing the start.
import { afterAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfigText } from "../../src/config/load.ts";
import { openStore } from "../../src/store/store.ts";
import { loadConfigured } from "../../src/tls/sources.ts";
import { sqliteTlsStore } from "../../src/tls/tls-store.repo.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { testConfigToml } from "../helpers/fixtures.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

test("a stored certificate whose key cannot be opened is a problem with its reason, not a throw", async () => {
  const dataDir = join(dir.path, "data");
  const parsed = parseConfigText(
    testConfigToml({
      dataDir,
      tls: `mode = "acme"\n[tls.acme]\ndirectory_url = "https://127.0.0.1:9/directory"\ndomains = ["mail.postroom.test"]\nchallenge_listen = "127.0.0.1:0"`,
    }),
  );
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  const config = parsed.config;
  const { certFile, keyFile } = makeSelfSignedCert(dir.path, "mail.postroom.test", "server", 90);
  const pair = { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };

  const first = openStore(dataDir);
  await sqliteTlsStore(first, Date.now).saveCertificate(pair);
  const loaded = await loadConfigured(config, () => sqliteTlsStore(first, Date.now), Date.now());
  expect(loaded.material).toStrictEqual(pair);
  first.close();

  writeFileSync(join(dataDir, "keys", "secrets.key"), Buffer.alloc(32, 9));
  const second = openStore(dataDir);
  try {
    const after = await loadConfigured(config, () => sqliteTlsStore(second, Date.now), Date.now());
    expect(after.material).toBeNull();
    expect(after.problem).toStartWith("the stored certificate cannot be read: ");
  } finally {
    second.close();
  }
});
