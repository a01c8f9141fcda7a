// The reply parser's rules (src/inbound/payload/reply/), each with real-looking cases: a quote header
// in each language and form the parser knows, quoted lines, each signature form, and text
// that only looks like one of them. Every expected value was read by hand and is also the
// unpatched email-reply-parser 2.3.9's answer (checked below), so the table says what the
// package did and what we must keep doing.
import { describe, expect, test } from "bun:test";
import { QUOTE_HEADERS, SIGNATURES } from "../../src/inbound/payload/reply/patterns.ts";
import { replyText } from "../../src/inbound/payload/reply-text.ts";
import { assertUnpatched, originalReplyText, originalTables } from "../helpers/reply-original.ts";

type Rule = "quote header" | "quoted lines" | "signature" | "text";

const CASES: [rule: Rule, name: string, text: string, reply: string][] = [
  [
    "quote header",
    "On ... wrote:",
    "Works for me.\n\nOn Tue, 24 Nov 2026 at 09:12, Carol Ruiz <carol@example.net> wrote:\n> Can we move the call?\n",
    "Works for me.",
  ],
  [
    "quote header",
    "On ... wrote: folded by the sender's client",
    "Works for me.\n\nOn Tue, 24 Nov 2026 at 09:12, Carol Ruiz <carol@example.net>\nwrote:\n> Can we move the call?\n",
    "Works for me.",
  ],
  ["quote header", "dashes around the header", "Ok\n\n-- On Tue, 24 Nov 2026, Carol <c@example.net> wrote: --\nold\n", "Ok"],
  [
    "quote header",
    "Le ... a écrit :",
    "D'accord.\n\nLe mar. 24 nov. 2026 à 09:12, Claire <claire@example.fr> a écrit :\n> On décale ?\n",
    "D'accord.",
  ],
  [
    "quote header",
    "El ... escribió:",
    "Perfecto.\n\nEl mar, 24 nov 2026 a las 9:12, Carla <carla@example.es> escribió:\n> ¿Movemos la llamada?\n",
    "Perfecto.",
  ],
  [
    "quote header",
    "Il ... ha scritto:",
    "Va bene.\n\nIl giorno mar 24 nov 2026 alle ore 09:12 Carlo <carlo@example.it> ha scritto:\n> Spostiamo?\n",
    "Va bene.",
  ],
  [
    "quote header",
    "Em ... escreveu:",
    "Combinado.\n\nEm ter., 24 de nov. de 2026 às 09:12, Carla <carla@example.pt> escreveu:\n> Mudamos?\n",
    "Combinado.",
  ],
  [
    "quote header",
    "Am ... schrieb NAME <EMAIL>:",
    "Passt.\n\nAm Di., 24. Nov. 2026 schrieb Karl <karl@example.de>:\n> Verschieben?\n",
    "Passt.",
  ],
  ["quote header", "Am ... um ... schrieb NAME:", "Passt.\n\nAm 24.11.2026 um 09:12 schrieb Karl Weber:\n> Verschieben?\n", "Passt."],
  ["quote header", "NAME <EMAIL> schrieb:", "Passt.\n\nKarl Weber <karl@example.de> schrieb:\n> Verschieben?\n", "Passt."],
  ["quote header", "Op ... schreef:", "Prima.\n\nOp di 24 nov. 2026 om 09:12 schreef Kees <kees@example.nl>:\n> Verzetten?\n", "Prima."],
  [
    "quote header",
    "W dniu ... napisał:",
    "Dobrze.\n\nW dniu 24.11.2026 o 09:12, Karol <karol@example.pl> napisał:\n> Przesuniemy?\n",
    "Dobrze.",
  ],
  ["quote header", "Dnia ... pisze:", "Dobrze.\n\nDnia 24.11.2026 Karol <karol@example.pl> pisze:\n> Przesuniemy?\n", "Dobrze."],
  ["quote header", "Den ... skrev:", "Fint.\n\nDen 24 nov. 2026 kl. 09:12 skrev Karin <karin@example.se>:\n> Flytta?\n", "Fint."],
  ["quote header", "tir. ... skrev:", "Fint.\n\ntir. 24. nov. 2026 kl. 09:12 skrev Kari <kari@example.no>:\n> Flytte?\n", "Fint."],
  [
    "quote header",
    "pe ... kirjoitti:",
    "Sopii.\n\npe 24.11.2026 klo 9.12 Kaisa <kaisa@example.fi> kirjoitti:\n> Siirretäänkö?\n",
    "Sopii.",
  ],
  ["quote header", "ср, ... г. в ...:", "Хорошо.\n\nср, 25 нояб. 2026\u202Fг. в 09:12, Ксения <k@example.ru>:\n> Перенесём?\n", "Хорошо."],
  ["quote header", "在 ... 写道：", "好的。\n\n在 2026年11月24日 09:12, 小明 写道：\n> 改时间吗？\n", "好的。"],
  ["quote header", "... 작성:", "좋아요.\n\n2026. 11. 24. 오전 9:12, 민수 작성:\n> 옮길까요?\n", "좋아요."],
  ["quote header", "... のメッセージ:", "了解です。\n\n2026/11/24 9:12、太郎 のメッセージ:\n> 移動しますか？\n", "了解です。"],
  ["quote header", "NAME on DATE at TIME wrote:", "Works.\n\nCarol Ruiz on 24 Nov 2026 at 09:12 wrote:\n> Move?\n", "Works."],
  [
    "quote header",
    "From: block of Outlook",
    "Works.\n\nFrom: Carol Ruiz <carol@example.net>\nSent: Tuesday, November 24, 2026 9:12 AM\nTo: Dan <dan@example.org>\nSubject: Call\n\nMove?\n",
    "Works.",
  ],
  [
    "quote header",
    "Von: block",
    "Passt.\n\nVon: Karl Weber <karl@example.de>\nGesendet: Dienstag, 24. November 2026 09:12\n\nVerschieben?\n",
    "Passt.",
  ],
  [
    "quote header",
    "De: block",
    "D'accord.\n\nDe : Claire <claire@example.fr>\nEnvoyé : mardi 24 novembre 2026 09:12\n\nOn décale ?\n",
    "D'accord.",
  ],
  [
    "quote header",
    "Van: block",
    "Prima.\n\nVan: Kees <kees@example.nl>\nVerzonden: dinsdag 24 november 2026 09:12\n\nVerzetten?\n",
    "Prima.",
  ],
  [
    "quote header",
    "Da: block",
    "Va bene.\n\nDa: Carlo <carlo@example.it>\nInviato: martedì 24 novembre 2026 09:12\n\nSpostiamo?\n",
    "Va bene.",
  ],
  ["quote header", "20YY-MM-DD HH:II ... >:", "Works.\n\n2026-11-24 09:12 GMT+01:00 Carol <carol@example.net>:\n> Move?\n", "Works."],
  ["quote header", 'DD.MM.20YY HH:II "NAME" <EMAIL>:', 'Passt.\n\n24.11.2026 09:12, "Karl" <karl@example.de>:\n> Verschieben?\n', "Passt."],
  ["quote header", 'HH:II, DATE, "NAME" <EMAIL>:', 'Works.\n\n09:12, 24 Nov 2026, "Carol" <carol@example.net>:\n> Move?\n', "Works."],
  ["quote header", "DATE from NAME <EMAIL>:", "Works.\n\n24 Nov 2026 09:12 from Carol <carol@example.net>:\n> Move?\n", "Works."],
  ["quote header", "-----Original Message-----", "Works.\n\n-----Original Message-----\nFrom: Carol\nSent: Tuesday\n\nMove?\n", "Works."],
  ["quote header", "--- Oprindelig besked ---", "Fint.\n\n--- Oprindelig besked ---\nFra: Karen\n\nFlytte?\n", "Fint."],
  ["quote header", "----- Message d'origine -----", "D'accord.\n\n----- Message d'origine -----\nDe: Claire\n\nOn décale ?\n", "D'accord."],
  [
    "quote header",
    "-----Ursprüngliche Nachricht-----",
    "Passt.\n\n-----Ursprüngliche Nachricht-----\nVon: Karl\n\nVerschieben?\n",
    "Passt.",
  ],
  ["quote header", "a line starting On without wrote is text", "On Tuesday we ship.\nThe team\n", "On Tuesday we ship.\nThe team"],
  ["quote header", "From: without an address is text", "From: the warehouse, two boxes.\nBye\n", "From: the warehouse, two boxes.\nBye"],
  ["quoted lines", "quoted history at the end", "Yes, ship it.\n\n> Shall we ship?\n> -- Carol\n", "Yes, ship it."],
  ["quoted lines", "nested quoting", "Yes.\n\n>> first\n> second\n", "Yes."],
  [
    "quoted lines",
    "an answer between quoted lines keeps both answers",
    "> Shall we ship?\nYes.\n> Which box?\nThe blue one.\n",
    "Yes.\nThe blue one.",
  ],
  ["quoted lines", "only quoted lines leave nothing", "> a\n> b\n", ""],
  ["quoted lines", "a '>' inside a line is text", "Use a -> b then c >= d.\n", "Use a -> b then c >= d."],
  ["signature", "'-- ' separator", "See you.\n\n-- \nDan Brown\nexample.org\n", "See you."],
  ["signature", "'--' separator without the space", "See you.\n\n--\nDan\n", "See you."],
  ["signature", "'__' separator", "See you.\n\n__\nDan\n", "See you."],
  ["signature", "'++' separator", "See you.\n\n++\nDan\n", "See you."],
  ["signature", "'==' separator", "See you.\n\n===\nDan\n", "See you."],
  ["signature", "Outlook's 32 underscores", "See you.\n\n________________________________\nFrom: Carol\n", "See you."],
  ["signature", "Sent from my iPhone", "See you.\n\nSent from my iPhone\n", "See you."],
  ["signature", "Get Outlook for iOS", "See you.\n\nGet Outlook for iOS<https://aka.ms/o0ukef>\n", "See you."],
  ["signature", "Cheers", "See you.\n\nCheers,\nDan\n", "See you."],
  ["signature", "Best wishes!", "See you.\n\nbest wishes!\nDan\n", "See you."],
  ["signature", "Kind regards", "See you.\n\nKind Regards,\nDan\n", "See you."],
  ["signature", "Warm and regards", "See you.\n\nWarm and regards\nDan\n", "See you."],
  ["signature", "Von meinem iPhone gesendet", "Bis dann.\n\nVon meinem iPhone gesendet\n", "Bis dann."],
  ["signature", "Gesendet von ... für ...", "Bis dann.\n\nGesendet von Mail für Windows\n", "Bis dann."],
  ["signature", "Sendt fra min iPhone", "Vi ses.\n\nSendt fra min iPhone\n", "Vi ses."],
  ["signature", "Envoyé depuis", "À bientôt.\n\nEnvoyé depuis mon iPad\n", "À bientôt."],
  ["signature", "Envoyé de mon", "À bientôt.\n\nEnvoyé de mon iPhone\n", "À bientôt."],
  ["signature", "Envoyé à partir de", "À bientôt.\n\nEnvoyé à partir de Outlook\n", "À bientôt."],
  ["signature", "Télécharger Outlook pour", "À bientôt.\n\nTélécharger Outlook pour Android\n", "À bientôt."],
  ["signature", "Bien à vous", "À bientôt.\n\nBien à vous,\nClaire\n", "À bientôt."],
  ["signature", "Cordialement", "À bientôt.\n\nCordialement,\nClaire\n", "À bientôt."],
  ["signature", "Bonne soirée", "À bientôt.\n\nBonne soirée!\nClaire\n", "À bientôt."],
  ["signature", "Enviado desde", "Hasta luego.\n\nEnviado desde mi iPhone\n", "Hasta luego."],
  ["signature", "In data ... scritto:", "Va bene.\n\nIn data 24 novembre 2026 Carlo ha scritto:\nvecchio\n", "Va bene."],
  ["signature", "Verzonden vanaf", "Tot ziens.\n\nVerzonden vanaf mijn iPad\n", "Tot ziens."],
  ["signature", "Verstuurd vanaf", "Tot ziens.\n\nVerstuurd vanaf mijn iPhone\n", "Tot ziens."],
  [
    "signature",
    "a signature word inside a sentence is text",
    "Regards to the team, and cheers for the work.\n",
    "Regards to the team, and cheers for the work.",
  ],
  ["signature", "a separator inside a line is text", "Range 10 -- 20 and a__b.\n", "Range 10 -- 20 and a__b."],
  ["text", "CRLF line ends come back as LF", "One\r\n\r\nTwo\r\n", "One\n\nTwo"],
  ["text", "trailing blanks of each line are cut", "One   \nTwo\t\n", "One\nTwo"],
  ["text", "tildes at the very end are cut", "Fine~~\n~~~", "Fine~~"],
  ["text", "an empty text stays empty", "", ""],
  ["text", "blank lines only", "\n\n  \n", ""],
];

// Escapes that mean nothing in a pattern (`\,` is `,`; `[\[` is `[[`), as dropped in patterns.ts.
const normalised = (regex: RegExp): string => `${regex.source.replace(/\\([,"'=])/g, "$1").replace(/\[\\\[/g, "[[")}/${regex.flags}`;
// Bun gives non-ASCII characters of a source as \uXXXX escapes.
const unescaped = (regex: RegExp): string =>
  regex.source.replace(/\\u([0-9A-Fa-f]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

describe("reply parser rules", () => {
  test.each(CASES)("%s: %s", (_rule, _name, text, reply) => {
    expect(replyText(text)).toBe(reply);
    expect(originalReplyText(text)).toBe(reply);
  });

  test("every pattern has a case of its rule with a line it matches", () => {
    const lines = (rule: Rule) => CASES.filter(([r]) => r === rule).flatMap(([, , text]) => text.split("\n"));
    const uncovered = [
      ...QUOTE_HEADERS.filter((h) => !lines("quote header").some((line) => h.pattern.test(line))).map((h) => h.pattern),
      ...SIGNATURES.filter((s) => !lines("signature").some((line) => s.pattern.test(line))).map((s) => s.pattern),
    ];
    expect(uncovered).toEqual([]);
  });

  // A line a pattern matches must hold its literal, or the literal gate would hide a real
  // header or signature (the separators' literals are their shortest run, "--" for -{2,4}).
  test("each pattern's literal is in its pattern, and every case line it matches holds it", () => {
    const lines = CASES.flatMap(([, , text]) => text.split("\n"));
    for (const { pattern, needs } of QUOTE_HEADERS) {
      expect(needs.some((literal) => unescaped(pattern).includes(literal))).toBe(true);
      for (const line of lines.filter((l) => pattern.test(l))) expect(needs.some((literal) => line.includes(literal))).toBe(true);
    }
    for (const { pattern, needs, caseless } of SIGNATURES) {
      for (const line of lines.filter((l) => pattern.test(l))) expect((caseless ? line.toLowerCase() : line).includes(needs)).toBe(true);
    }
  });

  test("the pattern tables are email-reply-parser 2.3.9's, in its order", async () => {
    assertUnpatched();
    const original = await originalTables();
    expect(QUOTE_HEADERS.map((h) => normalised(h.pattern))).toEqual(original.quoteHeadersRegex.map(normalised));
    expect(SIGNATURES.map((s) => normalised(s.pattern))).toEqual(original.signatureRegex.map(normalised));
  });
});
