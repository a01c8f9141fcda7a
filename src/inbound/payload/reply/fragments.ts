// A reply's own text: the message's plain text cut into fragments (the text, a signature,
// quoted history) and only the visible ones kept. Pure functions over a string.
//
// The rules are those of email-reply-parser 2.3.9 (dist/parser/emailparser.js and
// dist/email.js as published on npm), by Crisp IM SAS, under the MIT licence: Copyright (c)
// 2021 Crisp IM SAS (https://github.com/crisp-oss/email-reply-parser; full text in
// ./LICENSE.email-reply-parser), itself after willdurand/EmailReplyParser;
// our answers are the package's (test/inbound/reply-corpus.test.ts). The package reversed
// the text and then each line again for every test; here the lines are walked last to first
// in their own orientation, and a pattern runs only on text holding its literal
// (./patterns.ts), which is what keeps it cheap.
import { QUOTE_HEADERS, type QuoteHeader, SIGNATURES } from "./patterns.ts";

interface Fragment {
  /** Last line first, as the walk meets them. */
  lines: string[];
  quoted: boolean;
  signature: boolean;
}

const escapeLiteral = (literal: string): string => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** One pattern per set of flags: "does any match this line" in one scan (a line has no "\n"). */
const SIGNATURE_SCANS: readonly RegExp[] = [...Map.groupBy(SIGNATURES, (s) => s.pattern.flags)].map(
  ([flags, group]) => new RegExp(group.map((s) => `(?:${s.pattern.source})`).join("|"), flags),
);

/** A text matching neither has no signature line, and its lines skip SIGNATURE_SCANS. */
const SIGNATURE_LITERALS: readonly RegExp[] = [false, true].map(
  (ignoreCase) =>
    new RegExp(
      SIGNATURES.filter((s) => s.caseless === ignoreCase)
        .map((s) => escapeLiteral(s.needs))
        .join("|"),
      ignoreCase ? "i" : "",
    ),
);

/** A line starting with ">" (or, harmlessly, a lone CR followed by one: then the walk runs). */
const QUOTED_LINE = /^>/m;

// The quote-header literals, longest first, found in one scan of the text (cheaper than a
// search per literal). After each match the scan goes on from the next character, so
// overlapping literals are found too; at a position the longest literal is taken, and it
// marks every literal inside it as present ("wrote:" holds "wrote").
const QUOTE_LITERALS: readonly string[] = [...new Set(QUOTE_HEADERS.flatMap((h) => h.needs))].sort((a, b) => b.length - a.length);
const QUOTE_LITERAL_SCAN = new RegExp(QUOTE_LITERALS.map(escapeLiteral).join("|"), "g");
const INSIDE = new Map(QUOTE_LITERALS.map((outer) => [outer, QUOTE_LITERALS.filter((inner) => outer.includes(inner))]));

/** The quote headers that may match somewhere in `text`, in the table's order. */
export function quoteHeadersIn(text: string): readonly QuoteHeader[] {
  const present = new Set<string>();
  const scan = QUOTE_LITERAL_SCAN;
  scan.lastIndex = 0;
  for (let match = scan.exec(text); match !== null; match = scan.exec(text)) {
    if (!present.has(match[0])) for (const inner of INSIDE.get(match[0])!) present.add(inner);
    scan.lastIndex = match.index + 1;
  }
  return QUOTE_HEADERS.filter((h) => h.needs.some((literal) => present.has(literal)));
}

/**
 * A quote header folded over two lines ("On ..., Bob <b@e.c>\nwrote:") made one line, so the
 * walk sees it whole. As the package does: for each header pattern in turn, its first match's
 * first group, its first occurrence in the text, with "\n" as " " (a string replacement,
 * so `$&`-like sequences in the header are read as the package reads them).
 */
export function unfoldQuoteHeaders(text: string, headers: readonly QuoteHeader[]): string {
  let unfolded = text;
  for (const { pattern } of headers) {
    const group = unfolded.match(pattern)?.[1];
    if (group !== undefined) unfolded = unfolded.replace(group, group.replace(/\n/g, " "));
  }
  return unfolded;
}

/** The visible text of `plain`: without quoted history and signature, trailing "~" cut. */
export function visibleText(plain: string): string {
  let text = plain.replace(/\r\n/g, "\n");
  let headers = quoteHeadersIn(text);
  const unfolded = unfoldQuoteHeaders(text, headers);
  // Unfolding turns "\n" into " ", which no literal holds; the check is for the odd `$'`.
  if (unfolded !== text) headers = quoteHeadersIn(unfolded);
  text = unfolded;
  const mayHoldSignature = SIGNATURE_LITERALS.some((scan) => scan.test(text));
  const lines = text.split("\n");
  // Nothing to cut (most texts): with no quote header, no signature and no line starting with
  // ">", the walk would make one fragment of all lines, each trimmed at its end.
  if (headers.length === 0 && !mayHoldSignature && !QUOTED_LINE.test(text)) {
    const whole: Fragment = { lines: lines.map((line) => line.trimEnd()).reverse(), quoted: false, signature: false };
    return hidden(whole) ? "" : trimTildes(content(whole));
  }
  const isSignature = (line: string): boolean => mayHoldSignature && SIGNATURE_SCANS.some((scan) => scan.test(line));
  const isQuoteHeader = (line: string): boolean => headers.some((h) => h.pattern.test(line));
  const fragments = walk(lines, isSignature, isQuoteHeader);
  const visible = fragments.filter((f) => !hidden(f)).map(content);
  return trimTildes(visible.join("\n"));
}

/** The fragments of `lines`, first first. */
function walk(lines: string[], isSignature: (line: string) => boolean, isQuoteHeader: (line: string) => boolean): Fragment[] {
  const fragments: Fragment[] = [];
  let fragment: Fragment | null = null;
  // Whether the line pushed before this one (the fragment's last) is a signature line.
  let lastIsSignature = false;
  for (let i = lines.length - 1; i >= 0; i--) {
    const raw = lines[i]!;
    const rawIsSignature = isSignature(raw);
    // A signature line keeps its trailing blanks ("-- " is one); others lose them.
    const line = rawIsSignature ? raw : raw.trimEnd();
    if (fragment !== null) {
      if (lastIsSignature) {
        fragment.signature = true;
        fragments.push(fragment);
        fragment = null;
      } else if (line === "" && isQuoteHeader(fragment.lines[fragment.lines.length - 1]!)) {
        // A blank line above a quote header: the header and all below it are history.
        fragment.quoted = true;
        fragments.push(fragment);
        fragment = null;
      }
    }
    const quoted = line.startsWith(">");
    if (fragment === null || !(fragment.quoted === quoted || (fragment.quoted && (line === "" || isQuoteHeader(line))))) {
      if (fragment !== null) fragments.push(fragment);
      fragment = { lines: [], quoted, signature: false };
    }
    fragment.lines.push(line);
    lastIsSignature = rawIsSignature || (line !== raw && isSignature(line));
  }
  if (fragment !== null) fragments.push(fragment);
  return fragments.reverse();
}

function hidden(fragment: Fragment): boolean {
  return fragment.quoted || fragment.signature || fragment.lines.every((line) => line === "");
}

/** The fragment's lines in text order, one leading empty line dropped. */
function content(fragment: Fragment): string {
  const lines = fragment.lines.toReversed();
  if (lines.length > 1 && lines[0] === "") lines.shift();
  return lines.join("\n");
}

function trimTildes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 126) end--;
  return text.slice(0, end);
}
