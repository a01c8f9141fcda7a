// The lines that end a reply's own text: quote headers ("On DATE, NAME wrote:" in the
// languages below, Outlook's "From:" block, "-----Original Message-----") and signatures
// ("-- ", "Sent from my iPhone", "Regards,"...). reply_plain (docs/receiving.md) is
// cut at them by ./fragments.ts.
//
// The two regex tables are those of email-reply-parser 2.3.9 (dist/regex.js as published on
// npm), by Crisp IM SAS, under the MIT licence: Copyright (c) 2021 Crisp IM SAS
// (https://github.com/crisp-oss/email-reply-parser); the licence's full text, whose notice
// goes with every copy, is ./LICENSE.email-reply-parser. They are
// kept pattern for pattern so our answers stay the package's (test/inbound/reply-corpus.test.ts
// compares them on every corpus message). Escapes that mean nothing were dropped (`\,` is `,`);
// oddities that change a match were kept, e.g. `[[|<]` also takes a "|".
//
// Ours is `needs`: literals of which a text must hold one for the pattern to match it. A
// pattern is run only on a text holding one, which skips nearly all of them on a text with
// no quote header: most patterns start with `.+` or `[\s\S]+?`, and each run over a long
// text costs far more than looking for a word (test/inbound/reply-rules.test.ts checks that
// each literal is in its pattern).

export interface QuoteHeader {
  pattern: RegExp;
  /** The pattern cannot match a text holding none of these. */
  needs: readonly string[];
}

export const QUOTE_HEADERS: readonly QuoteHeader[] = [
  { pattern: /^-*\s*(On\s.+\s.+\n?wrote:{0,1})\s{0,1}-*$/m, needs: ["wrote"] }, // On DATE, NAME <EMAIL> wrote:
  { pattern: /^-*\s*(Le\s.+\s.+\n?écrit\s?:{0,1})\s{0,1}-*$/m, needs: ["écrit"] }, // Le DATE, NAME <EMAIL> a écrit :
  { pattern: /^-*\s*(El\s.+\s.+\n?escribió:{0,1})\s{0,1}-*$/m, needs: ["escribió"] }, // El DATE, NAME <EMAIL> escribió:
  { pattern: /^-*\s*(Il\s.+\s.+\n?scritto:{0,1})\s{0,1}-*$/m, needs: ["scritto"] }, // Il DATE, NAME <EMAIL> ha scritto:
  { pattern: /^-*\s*(Em\s.+\s.+\n?escreveu:{0,1})\s{0,1}-*$/m, needs: ["escreveu"] }, // Em DATE, NAME <EMAIL> escreveu:
  { pattern: /^\s*(Am\s.+\s)\n?\n?schrieb.+\s?(\[|<).+(\]|>):$/m, needs: ["schrieb"] }, // Am DATE schrieb NAME <EMAIL>:
  { pattern: /^\s*(Op\s[\s\S]+?\n?schreef[\s\S]+:)$/m, needs: ["schreef"] }, // Op DATE schreef NAME <EMAIL>:
  { pattern: /^\s*((W\sdniu|Dnia)\s[\s\S]+?(pisze|napisał(\(a\))?):)$/mu, needs: ["pisze", "napisał"] }, // W dniu DATE, NAME pisze:
  { pattern: /^\s*(Den\s.+\s\n?skrev\s.+:)$/m, needs: ["skrev"] }, // Den DATE skrev NAME <EMAIL>:
  { pattern: /^\s*(pe\s.+\s.+\n?kirjoitti:)$/m, needs: ["kirjoitti:"] }, // pe DATE NAME <EMAIL> kirjoitti:
  { pattern: /^\s*(Am\s.+\sum\s.+\s\n?schrieb\s.+:)$/m, needs: ["schrieb"] }, // Am DATE um TIME schrieb NAME:
  { pattern: /^\s*(ср,\s.+\n?\u202Fг\. в\s.+,\s.+[[|<].+[\]|>]:)$/m, needs: ["ср"] }, // ср, DATE\u202Fг. в TIME (a narrow no-break space), NAME <EMAIL>:
  { pattern: /^(在[\s\S]+写道：)$/m, needs: ["写道："] }, // 在 DATE, TIME, NAME 写道：
  { pattern: /^(20[0-9]{2}\..+\s작성:)$/m, needs: ["작성:"] }, // DATE TIME NAME 작성:
  { pattern: /^(20[0-9]{2}\/.+のメッセージ:)$/m, needs: ["のメッセージ:"] }, // DATE TIME、NAME のメッセージ:
  { pattern: /^(.+\s<.+>\sschrieb:)$/m, needs: ["schrieb:"] }, // NAME <EMAIL> schrieb:
  { pattern: /^(.+\son.*at.*wrote:)$/m, needs: ["wrote:"] }, // NAME on DATE at TIME wrote:
  { pattern: /^\s*(From\s?:.+\s?\n?\s*[[|<].+[\]|>])/m, needs: ["From"] }, // From: NAME <EMAIL>
  { pattern: /^\s*(Von\s?:.+\s?\n?\s*[[|<].+[\]|>])/m, needs: ["Von"] }, // Von: NAME <EMAIL>
  { pattern: /^\s*(De\s?:.+\s?\n?\s*(\[|<).+(\]|>))/m, needs: ["De"] }, // De: NAME <EMAIL>
  { pattern: /^\s*(Van\s?:.+\s?\n?\s*(\[|<).+(\]|>))/m, needs: ["Van"] }, // Van: NAME <EMAIL>
  { pattern: /^\s*(Da\s?:.+\s?\n?\s*(\[|<).+(\]|>))/m, needs: ["Da"] }, // Da: NAME <EMAIL>
  { pattern: /^(20[0-9]{2})-([0-9]{2}).([0-9]{2}).([0-9]{2}):([0-9]{2})\n?(.*)>:$/m, needs: [">:"] }, // 20YY-MM-DD HH:II GMT+01:00 NAME <EMAIL>:
  { pattern: /^\s*([a-z]{3,4}\.\s[\s\S]+\sskrev\s[\s\S]+:)$/m, needs: ["skrev"] }, // DATE skrev NAME <EMAIL>:
  { pattern: /^([0-9]{2}).([0-9]{2}).(20[0-9]{2})(.*)(([0-9]{2}).([0-9]{2}))(.*)"( *)<(.*)>( *):$/m, needs: ['"'] }, // DD.MM.20YY HH:II NAME <EMAIL>
  { pattern: /^[0-9]{2}:[0-9]{2}(.*)[0-9]{4}(.*)"( *)<(.*)>( *):$/, needs: ['"'] }, // HH:II, DATE, NAME <EMAIL>:
  { pattern: /^(.*)[0-9]{4}(.*)from(.*)<(.*)>:$/, needs: [">:"] }, // DATE from NAME <EMAIL>:
  { pattern: /^-{1,12} ?(O|o)riginal (M|m)essage ?-{1,12}$/i, needs: ["-"] },
  { pattern: /^-{1,12} ?(O|o)prindelig (B|b)esked ?-{1,12}$/i, needs: ["-"] },
  { pattern: /^-{1,12} ?(M|m)essage d'origine ?-{1,12}$/i, needs: ["-"] },
  { pattern: /^-{1,12} ?(U|u)rsprüngliche (N|n)achricht ?-{0,12}$/i, needs: ["-"] },
];

export interface Signature {
  pattern: RegExp;
  /** The pattern cannot match a line without this literal (compared ignoring case if `caseless`). */
  needs: string;
  caseless: boolean;
}

const exact = (pattern: RegExp, needs: string): Signature => ({ pattern, needs, caseless: false });
const caseless = (pattern: RegExp, needs: string): Signature => ({ pattern, needs, caseless: true });

export const SIGNATURES: readonly Signature[] = [
  exact(/^\s*-{2,4}$/, "--"), // separator
  exact(/^\s*_{2,4}$/, "__"),
  exact(/^-- $/, "-- "),
  exact(/^\+{2,4}$/, "++"),
  exact(/^={2,4}$/, "=="),
  exact(/^________________________________$/, "__"), // Outlook
  exact(/^Sent from (?:\s*.+)$/, "Sent from "),
  exact(/^Get Outlook for (?:\s*.+).*/m, "Get Outlook for "),
  caseless(/^Cheers,?!?$/im, "cheers"),
  caseless(/^Best wishes,?!?$/im, "best wishes"),
  caseless(/^\w{0,20}\s?(\sand\s)?Regards,?!?！?$/im, "regards"),
  exact(/^Von (?:\s*.+) gesendet$/, "Von "), // de
  exact(/^Gesendet von (?:\s*.+) für (?:\s*.+)$/, "Gesendet von "),
  exact(/^Sendt fra (?:\s*.+)$/, "Sendt fra "), // da
  exact(/^Envoyé depuis (?:\s*.+)$/, "Envoyé depuis "), // fr
  exact(/^Envoyé de mon (?:\s*.+)$/, "Envoyé de mon "),
  exact(/^Envoyé à partir de (?:\s*.+)$/, "Envoyé à partir de "),
  exact(/^Télécharger Outlook pour (?:\s*.+).*/m, "Télécharger Outlook pour "),
  caseless(/^Bien . vous,?!?$/im, "bien "),
  caseless(/^\w{0,20}\s?cordialement,?!?$/im, "cordialement"),
  caseless(/^Bonne (journ.e|soir.e)!?$/im, "bonne "),
  exact(/^Enviado desde (?:\s*.+)$/, "Enviado desde "), // es
  exact(/^-*\s*(In\sdata\s.+\s.+\n?scritto:{0,1})\s{0,1}-*$/m, "scritto"), // it
  exact(/^Verzonden vanaf (?:\s*.+)$/, "Verzonden vanaf "), // nl
  exact(/^Verstuurd vanaf (?:\s*.+)$/, "Verstuurd vanaf "),
];
