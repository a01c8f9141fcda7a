// spamd's answers (SPAMC/1.5, SYMBOLS) as tables, and the request we send.
import { describe, expect, test } from "bun:test";
import { parseSpamdReply, spamdRequest } from "../../../src/inbound/parse/spamd.ts";

describe("parseSpamdReply", () => {
  test.each([
    [
      "spam with symbols",
      "SPAMD/1.1 0 EX_OK\r\nContent-length: 27\r\nSpam: True ; 1000.4 / 5.0\r\n\r\nGTUBE,MISSING_DATE,NO_RECEIVED",
      { score: "1000.4", symbols: ["GTUBE", "MISSING_DATE", "NO_RECEIVED"], success: true, description: "SpamAssassin score" },
    ],
    [
      "ham, negative score",
      "SPAMD/1.1 0 EX_OK\r\nSpam: False ; -0.1 / 5.0\r\n\r\nNO_RELAYS\r\n",
      { score: "-0.1", symbols: ["NO_RELAYS"], success: true, description: "SpamAssassin score" },
    ],
    [
      "no symbols",
      "SPAMD/1.1 0 EX_OK\r\nSpam: False ; 0.0 / 5.0\r\n\r\n",
      { score: "0.0", symbols: [], success: true, description: "SpamAssassin score" },
    ],
    [
      "an error status",
      "SPAMD/1.0 76 Bad header line: x\r\n\r\n",
      { score: "0.0", symbols: [], success: false, description: "SpamAssassin: spamd answered 76 Bad header line: x" },
    ],
    [
      "no score header",
      "SPAMD/1.1 0 EX_OK\r\n\r\nGTUBE",
      { score: "0.0", symbols: [], success: false, description: "SpamAssassin: spamd's answer has no score" },
    ],
    [
      "not spamd at all",
      "HTTP/1.1 400 Bad Request\r\n\r\n",
      { score: "0.0", symbols: [], success: false, description: "SpamAssassin: no answer spamd would give" },
    ],
    [
      "odd symbol text is dropped",
      "SPAMD/1.1 0 EX_OK\r\nSpam: True ; 7.0 / 5.0\r\n\r\nA_RULE,<script>,B_RULE",
      { score: "7.0", symbols: ["A_RULE", "B_RULE"], success: true, description: "SpamAssassin score" },
    ],
  ])("%s", (_, text, expected) => {
    expect(parseSpamdReply(text)).toEqual(expected);
  });
});

test("the request names its exact length and carries the message bytes as they are", () => {
  const message = Buffer.from("Subject: é\r\n\r\nbody\r\n");
  const req = spamdRequest(message);
  expect(req.subarray(0, req.length - message.length).toString()).toBe(`SYMBOLS SPAMC/1.5\r\nContent-length: ${message.length}\r\n\r\n`);
  expect(req.subarray(req.length - message.length).equals(message)).toBe(true);
});
