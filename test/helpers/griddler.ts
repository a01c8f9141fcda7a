// Griddler's adapter for the hosted service (test/peers/griddler-cloudmailin, MIT) fed by
// Rack's multipart parser (Debian's ruby-rack), through test/helpers/griddler/read.rb.
const SCRIPT = new URL("./griddler/read.rb", import.meta.url).pathname;

export function rackAvailable(): boolean {
  const found =
    Bun.which("ruby") !== null && Bun.spawnSync(["ruby", "-e", 'require "rack"'], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  if (!found && process.env.CI === "true") throw new Error("ruby with rack (Debian's ruby-rack) is required in CI (.ci/run installs it)");
  return found;
}

export interface GriddlerEmail {
  legacy: boolean;
  to: string[];
  cc: string[];
  bcc?: string[];
  from: string;
  subject: string;
  date: string | null;
  text: string | null;
  html: string | null;
  attachments: { filename: string; type: string; bytes: string }[];
}

/** What Griddler hands a Rails app for this POST body (`bytes` of attachments in hex). */
export async function readWithGriddler(body: Uint8Array, contentType: string): Promise<GriddlerEmail> {
  const proc = Bun.spawn(["ruby", SCRIPT], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, CONTENT_TYPE: contentType },
  });
  proc.stdin.write(body);
  await proc.stdin.end();
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`Griddler could not read the POST: ${err}`);
  return JSON.parse(out);
}
