// reply_plain: the quoted history and the signature are cut off in every language the
// parser knows, and a text with nothing to cut comes back whole. The expected values were
// taken from the unpatched email-reply-parser 2.3.9 and read by hand; our parser
// (src/inbound/payload/reply/) must give the same answers (its rules: reply-rules.test.ts).
import { describe, expect, test } from "bun:test";
import { REPLY_PARSE_MAX_CHARS, replyText } from "../../../src/inbound/payload/reply-text.ts";

const CASES: [name: string, text: string, reply: string][] = [
  ["English quote header", "Thanks!\n\nOn Mon, 20 May 2024 at 10:13, Bob <bob@example.com> wrote:\n> hello\n> there\n", "Thanks!"],
  [
    "header folded over two lines, CRLF",
    "Thanks!\r\n\r\nOn Mon, 20 May 2024 at 10:13, Bob <bob@example.com>\r\nwrote:\r\n> hello\r\n",
    "Thanks!",
  ],
  ["French", "Merci\n\nLe lun. 20 mai 2024 à 10:13, Bob <bob@example.com> a écrit :\n> salut\n", "Merci"],
  ["Spanish, folded", "Gracias\n\nEl lun, 20 may 2024, Bob <b@e.c>\nescribió:\n> q", "Gracias"],
  ["Italian", "Grazie\n\nIl giorno lun 20 mag 2024 Bob <b@e.c> ha scritto:\n> q", "Grazie"],
  ["Portuguese", "Obrigado\n\nEm seg, 20 de mai de 2024 Bob <b@e.c> escreveu:\n> q", "Obrigado"],
  ["German", "Danke\n\nAm 20.05.2024 um 10:13 schrieb Bob <b@e.c>:\n> q\n", "Danke"],
  ["Dutch", "Dank je\n\nOp 20 mei 2024 schreef Bob <b@e.c>:\n> q", "Dank je"],
  ["Swedish", "Tack\n\nDen 20 maj 2024 skrev Bob <b@e.c>:\n> q", "Tack"],
  ["Finnish", "Kiitos\n\npe 20.5.2024 Bob <b@e.c> kirjoitti:\n> q", "Kiitos"],
  ["Russian", "Спасибо\n\nср, 20 мая 2024\u202Fг. в 10:13, Bob <b@e.c>:\n> q", "Спасибо"],
  ["Chinese", "谢谢\n\n在 2024年5月20日, 10:13, Bob 写道：\n> q", "谢谢"],
  ["Korean", "감사합니다\n\n2024. 5. 20. 오전 10:13, Bob 작성:\n> q", "감사합니다"],
  ["Japanese", "ありがとう\n\n2024/05/20 10:13、Bob のメッセージ:\n> q", "ありがとう"],
  ["Polish", "Dzięki\n\nW dniu 20.05.2024 Bob <b@e.c> napisał:\n> q", "Dzięki"],
  ["Outlook From: block", "Yes\n\nFrom: Bob <b@e.c>\nSent: Monday\n\nold text", "Yes"],
  ["Original Message separator", "Yes\n\n-----Original Message-----\nFrom: Bob\n\nold text", "Yes"],
  ["mobile signature", "Sure\n\nSent from my iPhone", "Sure"],
  ["signature after the -- separator", "Yes.\n\n-- \nAlice\nCEO", "Yes."],
  [
    "nothing to cut",
    "Plain note with no quote, a date 2024-05-20 and a from: word.\n\nBye",
    "Plain note with no quote, a date 2024-05-20 and a from: word.\n\nBye",
  ],
  ["only quoted lines", "> only quoted\n> lines", ""],
  // Signatures the literal gate (src/inbound/payload/reply/fragments.ts) must still see (exact and caseless literals).
  ["Cheers sign-off", "Yes\n\nCheers,\nAlice", "Yes"],
  ["regards, any case", "Yes\n\nKind regards,\nAlice", "Yes"],
  ["BEST WISHES in capitals", "Yes\n\nBEST WISHES,\nAlice", "Yes"],
  ["French cordialement", "Oui\n\nBien cordialement,\nAlice", "Oui"],
  ["French Bonne journée", "Oui\n\nBonne journée!\nAlice", "Oui"],
  ["German mobile signature", "Ja\n\nVon meinem iPhone gesendet", "Ja"],
  ["Spanish mobile signature", "Sí\n\nEnviado desde mi iPhone", "Sí"],
  ["Dutch mobile signature", "Ja\n\nVerstuurd vanaf mijn iPhone", "Ja"],
  ["underscore separator", "Yes\n\n____\nAlice", "Yes"],
  ["-- separator with trailing blanks", "Yes\n\n--   \nAlice", "Yes"],
  [
    "signature words inside a sentence are text",
    "No signature here, only a word like regard and a -- dash inside.\n\nBye",
    "No signature here, only a word like regard and a -- dash inside.\n\nBye",
  ],
  ["trailing tildes", "Fine~~~", "Fine"],
];

describe("replyText", () => {
  for (const [name, text, reply] of CASES) {
    test(name, () => expect(replyText(text)).toBe(reply));
  }

  test("no plain text, or one past the size limit, has no reply part", () => {
    expect(replyText(undefined)).toBeUndefined();
    expect(replyText("x".repeat(REPLY_PARSE_MAX_CHARS + 1))).toBeUndefined();
    expect(replyText("x".repeat(REPLY_PARSE_MAX_CHARS))).toBe("x".repeat(REPLY_PARSE_MAX_CHARS));
  });
});
