// The hosted service's official Go client (test/peers/cloudmailin-go, copied with its MIT
// licence) driven by a small program of ours (go-consumer/main.go), built with Debian's
// golang-go offline: the client has no dependencies, and a `replace` directive points its
// module at the copy. One build per test process, in a temp dir.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { tempDir } from "./tmp.ts";

const CLIENT_DIR = new URL("../peers/cloudmailin-go", import.meta.url).pathname;
const PROGRAM = new URL("./go-consumer/main.go", import.meta.url).pathname;

export function goAvailable(): boolean {
  const found = Bun.which("go") !== null;
  if (!found && process.env.CI === "true") throw new Error("go (Debian's golang-go) is required in CI (.ci/run installs it)");
  return found;
}

let built: { binary: string; remove(): void } | null = null;

/** Builds the consumer program (once per process); its path. */
export async function goConsumer(): Promise<string> {
  if (built) return built.binary;
  const dir = tempDir("postroom-go-");
  const src = join(dir.path, "src");
  mkdirSync(src);
  writeFileSync(join(src, "main.go"), await Bun.file(PROGRAM).text());
  writeFileSync(
    join(src, "go.mod"),
    `module postroom.test/consumer\n\ngo 1.16\n\nrequire github.com/cloudmailin/cloudmailin-go v0.0.0\n\nreplace github.com/cloudmailin/cloudmailin-go => ${CLIENT_DIR}\n`,
  );
  const binary = join(dir.path, "consumer");
  const env = {
    ...process.env,
    GOFLAGS: "-mod=mod",
    GOPROXY: "off",
    GOCACHE: join(dir.path, "cache"),
    GOPATH: join(dir.path, "gopath"),
    CGO_ENABLED: "0",
  };
  const proc = Bun.spawn(["go", "build", "-o", binary, "."], { cwd: src, env, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`go build failed:\n${out}${err}`);
  built = { binary, remove: dir.remove };
  return binary;
}

/** Deletes the build (call in afterAll). */
export function removeGoConsumer(): void {
  built?.remove();
  built = null;
}

/** What the Go client parsed from one POST (go-consumer's JSON line). */
export interface GoParsed {
  path: string;
  error?: string;
  subject: string;
  from: string;
  envelope_to: string;
  tls: boolean;
  tls_cipher: string;
  plain: string;
  attachments: {
    file_name: string;
    content_type: string;
    size: number;
    content_id: string;
    disposition: string;
    content_bytes: number;
    content: string;
  }[];
}

/** `consumer serve`: a target whose handler is cloudmailin.ParseIncoming(req.Body). */
export class GoTarget {
  readonly parsed: GoParsed[] = [];
  private waiters: { count: number; resolve: () => void }[] = [];

  private constructor(
    private readonly proc: Subprocess<"ignore", "pipe", "pipe">,
    readonly port: number,
  ) {}

  static async start(): Promise<GoTarget> {
    const proc = Bun.spawn([await goConsumer(), "serve"], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const lines = readLines(proc.stdout);
    const first = await lines.next();
    const port = Number(/^listening (\d+)$/.exec(String(first.value))?.[1]);
    if (!port) throw new Error(`the Go target did not start: ${first.value} ${await new Response(proc.stderr).text()}`);
    const target = new GoTarget(proc, port);
    void (async () => {
      for await (const line of lines) {
        target.parsed.push(JSON.parse(line));
        target.waiters = target.waiters.filter((w) => (target.parsed.length >= w.count ? (w.resolve(), false) : true));
      }
    })();
    return target;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Resolves once `count` POSTs have been parsed (or refused) in all. */
  waitFor(count: number): Promise<void> {
    if (this.parsed.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  async stop(): Promise<void> {
    this.proc.kill();
    await this.proc.exited;
  }
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      yield buf.slice(0, nl);
      buf = buf.slice(nl + 1);
    }
  }
}

/** `consumer send FILE...`: SendMail through E11 with one AttachmentFromFile per file. */
export async function goSend(
  files: string[],
  env: { smtpUrl: string; apiBaseUrl: string; from: string; to: string },
): Promise<{ id?: string; error?: string }> {
  const proc = Bun.spawn([await goConsumer(), "send", ...files], {
    env: {
      ...process.env,
      CLOUDMAILIN_SMTP_URL: env.smtpUrl,
      CLOUDMAILIN_API_BASE_URL: env.apiBaseUrl,
      MAIL_FROM: env.from,
      MAIL_TO: env.to,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`the Go client failed: ${out}${err}`);
  return JSON.parse(out.trim());
}
