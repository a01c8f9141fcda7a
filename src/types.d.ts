// SQL migrations are imported as text so `bun build --compile` embeds them in the binary.
declare module "*.sql" {
  const text: string;
  export default text;
}

declare module "libmime" {
  const libmime: {
    decodeWords(value: string): string;
    encodeWords(value: string, mimeWordEncoding?: "Q" | "B", maxLength?: number): string;
    /** A structured header value ("attachment; filename*=UTF-8''a.pdf"): RFC 2231 parameters joined and decoded. */
    parseHeaderValue(value: string): { value: string; params: Record<string, string | undefined> };
  };
  export default libmime;
}
