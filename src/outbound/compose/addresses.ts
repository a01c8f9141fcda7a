// Recipient and sender addresses as clients give them: an array of strings or one
// comma-separated string, each "a@b.c" or "Name <a@b.c>" (docs/sending.md, E11).
import addressparser from "nodemailer/lib/addressparser";

export interface MailAddress {
  address: string;
  name: string;
}

// An addr-spec we can put in an SMTP command: no spaces, brackets or control characters,
// one @ with something on both sides; the domain may be IDN (SMTPUTF8 or punycode later).
const ADDR_SPEC = /^[^\s@<>()[\],;:\\"\u0000-\u001f\u007f]{1,64}@[^\s@<>()[\],;:\\"\u0000-\u001f\u007f]{1,253}$/u;

export function isAddress(value: string): boolean {
  if (!ADDR_SPEC.test(value)) return false;
  const domain = value.slice(value.lastIndexOf("@") + 1);
  return domain.includes(".") && !domain.startsWith(".") && !domain.endsWith(".") && !domain.includes("..");
}

/** Parses one list; throws a sentence (without the field name) for the first bad entry. */
export function parseAddressList(value: string | readonly string[]): MailAddress[] {
  const parts = typeof value === "string" ? [value] : value;
  const out: MailAddress[] = [];
  for (const part of parts) {
    if (/[\r\n\u0000]/.test(part)) throw new Error("must not contain line breaks");
    for (const entry of addressparser(part)) {
      if ("group" in entry && entry.group) throw new Error(`groups ("${entry.name}: ...;") are not supported`);
      const address = (entry.address ?? "").trim();
      if (address === "" && (entry.name ?? "") === "") continue;
      if (!isAddress(address)) throw new Error(`"${address || entry.name}" is not an email address`);
      out.push({ address, name: (entry.name ?? "").trim() });
    }
  }
  return out;
}

/** The addresses a header field's values name; none when they do not parse (the header only says how the message reads). */
export function headerAddresses(values: readonly string[]): MailAddress[] {
  try {
    return parseAddressList(values);
  } catch {
    return [];
  }
}

// Characters that would make a bare display name parse as something else ("a, b", "x <y@z>").
const NAME_SPECIALS = /[()<>[\]:;@\\,"]/;

/** "Name <a@b.c>" or "a@b.c": how the address reads back; a name with specials is quoted so it parses back as itself. */
export const formatAddress = (a: MailAddress): string => {
  if (!a.name) return a.address;
  const name = NAME_SPECIALS.test(a.name) ? `"${a.name.replace(/["\\]/g, "\\$&")}"` : a.name;
  return `${name} <${a.address}>`;
};

export const domainOf = (address: string): string => address.slice(address.lastIndexOf("@") + 1).toLowerCase();

/** The domain a queued message is sent from (its DKIM signature's, its bounce address's): that of its From address. */
export function senderDomainOf(from: string): string {
  return domainOf(parseAddressList(from)[0]?.address ?? from);
}
