// The plain texts of every message in test/corpus/ (mime/*, bounces, dkim), as the inbound
// path parses them: each file both as stored and as a sender puts it on the wire (every bare
// CR or LF as CRLF), since the two can give different texts. Used where reply_plain must be
// checked over text written by others (test/inbound/reply-corpus.test.ts).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { MessageRefused, parseMessage } from "../../src/inbound/parse/parse.ts";
import { corpusPath } from "./corpus.ts";

const FOLDERS = ["mime/mailparser", "mime/postal-mime", "mime/enmime-good", "mime/enmime-broken", "bounces", "dkim"] as const;
const LIMITS = { maxHeaderBytes: 256 * 1024, maxMimeDepth: 20, maxMimeParts: 500 };

export interface CorpusText {
  /** "folder/name" for the stored bytes, "folder/name (wire)" for the CRLF form. */
  key: string;
  plain: string;
}

function messageFiles(): { key: string; path: string }[] {
  return FOLDERS.flatMap((folder) => {
    const dir = corpusPath(folder);
    return readdirSync(dir)
      .filter((name) => !/^(LICENSE|README)/i.test(name) && !name.startsWith(".") && !/\.(json|ya?ml|pem|key|txt)$/i.test(name))
      .filter((name) => statSync(join(dir, name)).isFile())
      .sort()
      .map((name) => ({ key: `${folder}/${name}`, path: join(dir, name) }));
  });
}

function asSent(raw: Buffer): Buffer {
  const text = raw.toString("latin1").replace(/\r\n|\r|\n/g, "\r\n");
  return Buffer.from(text.endsWith("\r\n") ? text : `${text}\r\n`, "latin1");
}

/** Every corpus message's plain text (messages without one, or refused by a limit, give none). */
export async function corpusTexts(): Promise<CorpusText[]> {
  const texts: CorpusText[] = [];
  for (const file of messageFiles()) {
    const raw = readFileSync(file.path);
    for (const [key, bytes] of [
      [file.key, raw],
      [`${file.key} (wire)`, asSent(raw)],
    ] as const) {
      try {
        const parsed = await parseMessage(bytes, LIMITS);
        if (typeof parsed.text === "string" && parsed.text !== "") texts.push({ key, plain: parsed.text });
      } catch (err) {
        if (!(err instanceof MessageRefused)) throw err;
      }
    }
  }
  return texts;
}
