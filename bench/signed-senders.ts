// The senders of `bun run bench:inbound`: D domains, each publishing in the loopback DNS
// what a real sender's domain publishes (an SPF record for the client's address, a DKIM
// key, a DMARC record), and the benchmark's message (bench/message.ts) from each of them,
// DKIM-signed by mailauth with one RSA-2048 key that every domain publishes.
//
// Each domain's message is signed once, at start-up. Signing every message as it is sent
// would put about a millisecond of RSA per message on the two cores the servers are
// measured on. The signature covers the body (bh=) and From, To, Subject, Date,
// MIME-Version and Content-Type (h=), which are the same in every message of a domain,
// and not the Message-ID, which each message has its own: so one DKIM-Signature header
// per domain verifies on all of that domain's messages (test/bench/signed-senders.test.ts
// checks it with dkimpy and with Postroom's own checker).
import { generateKeyPairSync } from "node:crypto";
import { dkimSign } from "mailauth";
import type { TestDnsServer } from "../test/helpers/dns-server.ts";
import { dotStuff, messageIdOf, messageParts, wireOf, wireTail } from "./message.ts";

export const DKIM_SELECTOR = "bench2048";
/** h= of every signature: what every message of a domain has in common. */
export const SIGNED_HEADERS = ["from", "to", "subject", "date", "mime-version", "content-type"];
/** The benchmark's client connects from 127.0.0.1. */
export const SPF_RECORD = "v=spf1 ip4:127.0.0.1 -all";
/** Domains are numbered with this many digits, so that every message has the same size. */
const DOMAIN_DIGITS = 5;
export const MAX_DOMAINS = 10 ** DOMAIN_DIGITS;

/** Sender domain number `k` (0-based): each one a registrable domain of its own. */
export const senderDomain = (k: number) => `sender-${String(k).padStart(DOMAIN_DIGITS, "0")}.test`;

/** DMARC asks for p=none on even domains and p=reject on odd ones; both pass, as SPF and DKIM align. */
export const dmarcRecord = (k: number) => `v=DMARC1; p=${k % 2 === 0 ? "none" : "reject"}`;

export interface SenderKey {
  privateKeyPem: string;
  /** The TXT record of the public key at DKIM_SELECTOR._domainkey.<domain>. */
  dkimRecord: string;
}

export function generateSenderKey(): SenderKey {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    dkimRecord: `v=DKIM1; k=rsa; p=${publicKey.export({ type: "spki", format: "der" }).toString("base64")}`,
  };
}

/** The TXT records sender domain `k` publishes, as [name, text]. */
export function senderRecords(k: number, key: SenderKey): [string, string][] {
  const domain = senderDomain(k);
  return [
    [domain, SPF_RECORD],
    [`${DKIM_SELECTOR}._domainkey.${domain}`, key.dkimRecord],
    [`_dmarc.${domain}`, dmarcRecord(k)],
  ];
}

/** Publishes the records of sender domains 0..domains-1 in `dns` (TXT strings of at most 255 characters). */
export function publishSenders(dns: TestDnsServer, domains: number, key: SenderKey): void {
  for (let k = 0; k < domains; k++) {
    for (const [name, text] of senderRecords(k, key)) dns.zone.set(name, [{ type: "TXT", data: text.match(/.{1,255}/g) ?? [""] }]);
  }
}

export interface SignedMessage {
  mailFrom: string;
  /** The wire bytes after DATA (CRLF, dot-stuffed, ending in CRLF "." CRLF). */
  data: Uint8Array;
}

export interface SignedMessageSet {
  domains: number;
  /** Bytes of one message as the server gets it (its DKIM-Signature included): the smallest and the largest. */
  size: { min: number; max: number };
  /** Bytes of one DKIM-Signature header field. */
  signatureBytes: number;
  /** Message number `seq`: from sender domain seq mod D, with a Message-ID of its own. */
  message(seq: number): SignedMessage;
  /** Message number `seq` as the server gets it (the wire bytes without dot-stuffing and the final "." line). */
  text(seq: number): string;
}

/** The benchmark's message to `rcptTo` from each of `domains` sender domains, each domain's signed once with `key`. */
export async function signedMessageSet(rcptTo: string, domains: number, key: SenderKey, signTime = new Date()): Promise<SignedMessageSet> {
  if (!Number.isInteger(domains) || domains < 1 || domains > MAX_DOMAINS)
    throw new Error(`the number of sender domains must be 1 to ${MAX_DOMAINS}, got ${domains}`);
  const { head, body } = messageParts(rcptTo);
  const signatures: string[] = [];
  for (let k = 0; k < domains; k++) {
    const domain = senderDomain(k);
    const signature = {
      signingDomain: domain,
      selector: DKIM_SELECTOR,
      privateKey: key.privateKeyPem,
      algorithm: "rsa-sha256",
      canonicalization: "relaxed/relaxed",
      headerList: SIGNED_HEADERS,
    };
    const signed = await dkimSign(`${head(messageIdOf(0), domain)}\r\n${body}\r\n`, {
      ...signature,
      signTime,
      signatureData: [signature] as never,
    });
    if (signed.errors.length > 0 || !signed.signatures)
      throw new Error(`DKIM signing for ${domain} failed: ${JSON.stringify(signed.errors)}`);
    signatures.push(signed.signatures);
  }
  const tail = wireTail(body);
  const text = (seq: number) => {
    const k = seq % domains;
    // What the server keeps of the wire bytes: the line before the final "." ends in CRLF.
    return signatures[k]! + head(messageIdOf(seq), senderDomain(k)) + "\r\n" + body + "\r\n";
  };
  const lengths = signatures.map((s) => s.length);
  const unsigned = Buffer.byteLength(text(0)) - lengths[0]!;
  return {
    domains,
    size: { min: unsigned + Math.min(...lengths), max: unsigned + Math.max(...lengths) },
    signatureBytes: lengths[0]!,
    message(seq) {
      const k = seq % domains;
      return {
        mailFrom: `news@${senderDomain(k)}`,
        data: wireOf(dotStuff(signatures[k]! + head(messageIdOf(seq), senderDomain(k))), tail),
      };
    },
    text,
  };
}

export type QueryKind = "spf" | "dkim" | "dmarc";

const SENDER_NAME = new RegExp(`^(?:(_dmarc)\\.|(${DKIM_SELECTOR})\\._domainkey\\.)?sender-\\d{${DOMAIN_DIGITS}}\\.test$`);

/** Which of a sender domain's records a DNS name is (its SPF, DKIM key or DMARC record); null for any other name. */
export function queryKind(name: string): QueryKind | null {
  const m = SENDER_NAME.exec(name);
  if (!m) return null;
  return m[1] ? "dmarc" : m[2] ? "dkim" : "spf";
}

export interface QueryTally {
  /** Per kind of sender record: queries, and distinct names asked for. */
  kinds: Record<QueryKind, { queries: number; names: number }>;
  /** Names that are no sender domain's record, with how often each was asked for. */
  other: [string, number][];
}

/** Sorts counted DNS queries (name → count, as bench/measure.ts's countQueries keeps them) by what they are for. */
export function tallyQueries(queries: ReadonlyMap<string, number>): QueryTally {
  const kinds = { spf: { queries: 0, names: 0 }, dkim: { queries: 0, names: 0 }, dmarc: { queries: 0, names: 0 } };
  const other: [string, number][] = [];
  for (const [name, count] of queries) {
    const kind = queryKind(name);
    if (kind === null) {
      other.push([name, count]);
    } else {
      kinds[kind].queries += count;
      kinds[kind].names++;
    }
  }
  return { kinds, other };
}
