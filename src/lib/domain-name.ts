// Domain names as users type them ("Example.COM.", "bücher.de") to the form we store
// and compare: lowercase ASCII (punycode), no trailing dot.
import { domainToASCII } from "node:url";

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The normalised domain, or null when `input` is not a registrable-looking domain name. */
export function normalizeDomain(input: string): string | null {
  const trimmed = input.trim().replace(/\.$/, "");
  if (trimmed === "" || trimmed.length > 253 || /[\u0000-\u0020\u007f/@:]/.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed.toLowerCase());
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split(".");
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  // A top-level label is never all digits; this also refuses IPv4 literals.
  if (/^\d+$/.test(labels.at(-1)!)) return null;
  return ascii;
}

/** Whether `name` is `domain` or a name under it. */
export function isSameOrSubdomain(name: string, domain: string): boolean {
  return name === domain || name.endsWith("." + domain);
}
