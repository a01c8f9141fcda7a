// A message's header section as written, split from its body: the one reading of "where do
// the fields end, and which lines belong to which field" that the DKIM signer
// (src/domains/dkim-canon.ts) and the dashboard's view of a kept message
// (src/inbound/kept-message.ts) share. The text is the message's bytes as latin1.

const HEADER_END = /\r?\n\r?\n/;

/**
 * The fields in message order, each with its folded lines joined by CRLF and without its
 * final line break, and the body after the first empty line ("" when there is none). A
 * line with no colon belongs to no field (a broken message) and is dropped; so is a folded
 * line before the first field.
 */
export function headerSection(text: string): { fields: string[]; body: string } {
  const end = HEADER_END.exec(text);
  const head = end ? text.slice(0, end.index) : text;
  const fields: string[] = [];
  for (const line of head.split(/\r?\n/)) {
    if ((line.startsWith(" ") || line.startsWith("\t")) && fields.length > 0) fields[fields.length - 1] += `\r\n${line}`;
    else if (line.includes(":")) fields.push(line);
  }
  return { fields, body: end ? text.slice(end.index + end[0].length) : "" };
}
