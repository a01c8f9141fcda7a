// The signing floor of bench:outbound: the CPU time the two DKIM signatures of one
// message cost at the least, measured in the same run as the sides (so on the same,
// equally busy machine): the body hash (SHA-256 of the message's body, shared by both
// signatures: the same relaxed body canonicalization) plus one RSA-2048 (rsa-sha256) and
// one Ed25519 (ed25519-sha256) signature over the signed header block, with node:crypto
// (BoringSSL in Bun, as Postroom's signer uses). CPU time of this process, not the wall
// clock, so a neighbour on the other core does not inflate it.
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";

export interface SigningFloor {
  /** µs of CPU per message: body hash + RSA-2048 + Ed25519. */
  totalUs: number;
  rsaUs: number;
  ed25519Us: number;
  bodyHashUs: number;
}

const keys = (() => {
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  const ed = generateKeyPairSync("ed25519").privateKey;
  return { rsa, ed };
})();

/** The header block a signature covers: the message's headers and its own DKIM-Signature header without b=. */
function signedHeaderBlock(raw: string): Buffer {
  const head = raw.slice(0, raw.indexOf("\r\n\r\n"));
  const dkim =
    "dkim-signature:v=1; a=rsa-sha256; c=relaxed/relaxed; d=sender.bench.test; s=bench; t=1700000000; h=from:to:subject:date:message-id:mime-version:content-type; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=";
  return Buffer.from(`${head.toLowerCase()}\r\n${dkim}`);
}

/** CPU µs per call of `fn`, over `iterations` calls. */
function cpuPerCallUs(iterations: number, fn: () => void): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < iterations; i++) fn();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / iterations;
}

/** The floor for `raw` (a whole message, CRLF line ends), over `iterations` messages. */
export function measureSigningFloor(raw: string, iterations = 200): SigningFloor {
  const block = signedHeaderBlock(raw);
  const body = Buffer.from(raw.slice(raw.indexOf("\r\n\r\n") + 4));
  const signWith = (key: KeyObject, algorithm: string | null) => () => void sign(algorithm, block, key);
  const bodyHashUs = cpuPerCallUs(iterations, () => void createHash("sha256").update(body).digest());
  const rsaUs = cpuPerCallUs(iterations, signWith(keys.rsa, "sha256"));
  const ed25519Us = cpuPerCallUs(iterations, signWith(keys.ed, null));
  return { totalUs: bodyHashUs + rsaUs + ed25519Us, rsaUs, ed25519Us, bodyHashUs };
}
