// A documentation page's fenced blocks as a script: the shell commands to run, in order,
// and the output the page says each gives. docs/quickstart.md marks them by the fence's
// info string (GitHub shows only the language):
//   ```sh                  a command; run it and wait for it to end
//   ```sh keep-running     a command that stays running (the appliance, the target)
//   ```json / ```text      what the command before it prints
//   ```text target-output  what the running target prints when mail arrives

export interface DocBlock {
  kind: "command" | "keep-running" | "output" | "target-output";
  text: string;
  /** The command this output belongs to (index into the blocks), for "output". */
  of?: number;
}

export function docBlocks(markdown: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  let lastCommand: number | undefined;
  for (const m of markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const words = m[1]!.trim().split(/\s+/);
    const text = m[2]!;
    if (words[0] === "sh") {
      const kind = words.includes("keep-running") ? "keep-running" : "command";
      blocks.push({ kind, text });
      lastCommand = kind === "command" ? blocks.length - 1 : undefined;
    } else if (words.includes("target-output")) blocks.push({ kind: "target-output", text });
    else {
      if (lastCommand === undefined) throw new Error(`an output block follows no command:\n${text}`);
      blocks.push({ kind: "output", text, of: lastCommand });
      lastCommand = undefined;
    }
  }
  return blocks;
}

/** Keys whose values differ from run to run (IDs, times, this machine's name): their presence is checked, not their value. */
const VOLATILE = new Set([
  "id",
  "created_at",
  "updated_at",
  "message_id",
  "x_postroom_message_id",
  "md5",
  "received",
  "date",
  "helo_domain",
  "x_mailer",
  "size",
]);

/**
 * Where `actual` differs from what the page shows: the same keys at every level, the same
 * values but for VOLATILE keys. Empty when they match.
 */
export function jsonDifferences(shown: unknown, actual: unknown, path = "$"): string[] {
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return [`${path}: the page shows an array, got ${JSON.stringify(actual)}`];
    if (actual.length !== shown.length) return [`${path}: the page shows ${shown.length} items, got ${actual.length}`];
    return shown.flatMap((s, i) => jsonDifferences(s, actual[i], `${path}[${i}]`));
  }
  if (shown !== null && typeof shown === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual))
      return [`${path}: the page shows an object, got ${JSON.stringify(actual)}`];
    const s = shown as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(s), ...Object.keys(a)])];
    return keys.flatMap((k) => {
      if (!(k in a)) return [`${path}.${k}: shown on the page, missing`];
      if (!(k in s)) return [`${path}.${k}: not on the page, got ${JSON.stringify(a[k])}`];
      return VOLATILE.has(k) ? [] : jsonDifferences(s[k], a[k], `${path}.${k}`);
    });
  }
  return shown === actual ? [] : [`${path}: the page shows ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
}

/**
 * Where a command's output differs from the block the page shows: a JSON block is compared
 * as JSON (jsonDifferences); in a text block, the lines before a JSON part must each be a
 * line of the output, and a JSON part (from a line starting with { or [) is compared with
 * the output's JSON from its first such line.
 */
export function outputDifferences(shown: string, actual: string): string[] {
  const shownLines = shown.split("\n");
  const jsonAt = shownLines.findIndex((l) => /^[[{]/.test(l));
  const textLines = (jsonAt < 0 ? shownLines : shownLines.slice(0, jsonAt)).filter((l) => l.trim() !== "");
  const actualLines = actual.split("\n").map((l) => l.trimEnd());
  const problems = textLines.filter((l) => !actualLines.includes(l.trimEnd())).map((l) => `line shown on the page, not printed: ${l}`);
  if (jsonAt < 0) return problems;
  const actualJsonAt = actualLines.findIndex((l) => /^[[{]/.test(l));
  if (actualJsonAt < 0) return [...problems, `the page shows JSON, the output has none:\n${actual}`];
  let parsed: unknown;
  try {
    parsed = JSON.parse(actualLines.slice(actualJsonAt).join("\n"));
  } catch {
    return [...problems, `the output is not JSON:\n${actual}`];
  }
  return [...problems, ...jsonDifferences(JSON.parse(shownLines.slice(jsonAt).join("\n")), parsed)];
}
