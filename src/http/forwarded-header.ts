// The client addresses a request's proxies reported: X-Forwarded-For ("client, proxy1,
// proxy2") and RFC 7239 Forwarded ('for=192.0.2.60;proto=https, for="[2001:db8::17]:4711"').
// Each lists the hops first to last; a proxy appends the address it saw. Only the parsing
// is here; which entry to believe is client-address.ts's decision.

/** The entries of an X-Forwarded-For header, first to last, as written (trimmed). */
export const xForwardedFor = (header: string): string[] => header.split(",").map((s) => s.trim());

// RFC 7230 tchar. Values also take ":[]", which some proxies leave unquoted around IPv6 and ports.
const NAME_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const VALUE_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:[\]]/;

/**
 * The `for=` value of each element of a Forwarded header, first to last (null for an
 * element without one), or null when the header does not parse: a pair without `=`, an
 * unterminated quoted string, a parameter given twice in one element, a control character.
 */
export function forwardedFor(header: string): (string | null)[] | null {
  const out: (string | null)[] = [];
  let element = new Map<string, string>();
  let i = 0;
  const skipSpace = () => {
    while (header[i] === " " || header[i] === "\t") i++;
  };
  const run = (chars: RegExp): string => {
    const start = i;
    while (i < header.length && chars.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  const quoted = (): string | null => {
    let value = "";
    for (i++; i < header.length; i++) {
      let c = header[i]!;
      if (c === '"') {
        i++;
        return value;
      }
      if (c === "\\") {
        if (++i >= header.length) return null;
        c = header[i]!;
      }
      if ((c < " " && c !== "\t") || c === "\x7f") return null;
      value += c;
    }
    return null;
  };
  for (;;) {
    skipSpace();
    const name = run(NAME_CHAR).toLowerCase();
    if (name === "" || header[i] !== "=") return null;
    i++;
    const value = header[i] === '"' ? quoted() : run(VALUE_CHAR);
    if (value === null || value === "" || element.has(name)) return null;
    element.set(name, value);
    skipSpace();
    if (i >= header.length || header[i] === ",") {
      out.push(element.get("for") ?? null);
      if (i >= header.length) return out;
      element = new Map();
    } else if (header[i] !== ";") return null;
    i++;
  }
}
