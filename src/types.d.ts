// SQL migrations are imported as text so `bun build --compile` embeds them in the binary.
declare module "*.sql" {
  const text: string;
  export default text;
}

declare module "libmime" {
  const libmime: { decodeWords(value: string): string; encodeWords(value: string, mimeWordEncoding?: "Q" | "B", maxLength?: number): string };
  export default libmime;
}
