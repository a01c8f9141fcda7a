// patches/smtp-server@3.21.6.patch: the option enhancedStatusCodeFromText sends the
// enhanced code our reply carries ("550 5.7.1 relay not permitted") where smtp-server would
// pick one from the reply code alone. Against a real smtp-server on loopback, with the
// listeners' options and without them (the test sinks, other servers: upstream behaviour).
// The patch changes the package's ESM build (what Postroom imports) and its CommonJS build
// (what a require() gets) alike: both run here. Its two types.d.ts hunks are checked by
// `bun run typecheck`: the option literal passed to start() must satisfy both builds' types.
import { assertSmtpServerVersion, SMTP_SERVER_VERSION } from "../../src/smtp/server-compat.ts";
import { afterEach, describe, expect, test } from "bun:test";
import { createRequire } from "node:module";
import smtpServerPackage from "smtp-server/package.json";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import type { SMTPServerOptions as CjsSMTPServerOptions } from "../../node_modules/smtp-server/dist/cjs/types.d.ts";
import projectPackage from "../../package.json";
import { SMTP_REPLIES } from "../../src/smtp/replies.ts";
import { SMTP_SERVER_REPLY_OPTIONS, smtpError, smtpServerText } from "../../src/smtp/reply.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";

const CommonJsSMTPServer: typeof SMTPServer = createRequire(import.meta.url)("smtp-server").SMTPServer;

let server: SMTPServer | null = null;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** A server that refuses bob@ at RCPT with 550 5.7.1 and answers a message with 250 2.0.0 Accepted. */
async function start(options: SMTPServerOptions, Server: typeof SMTPServer = SMTPServer): Promise<number> {
  server = new Server({
    ...options,
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    logger: false,
    onRcptTo: (address, _session, cb) => (address.address.startsWith("bob@") ? cb(smtpError(SMTP_REPLIES.relayNotPermitted)) : cb()),
    onData: (stream, _session, cb) => {
      stream.resume();
      stream.on("end", () => cb(null, smtpServerText(SMTP_REPLIES.accepted)));
    },
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", () => resolve()));
  return (server!.server.address() as { port: number }).port;
}

async function transaction(port: number): Promise<{ refused: string; accepted: string }> {
  const { session } = await SmtpSession.open(port);
  await session.command("EHLO client.test");
  await session.command("MAIL FROM:<a@client.test>");
  const refused = await session.command("RCPT TO:<bob@example.org>");
  await session.command("RCPT TO:<ann@example.org>");
  const accepted = await session.data("Subject: x\r\n\r\nx\r\n");
  await session.close();
  return { refused, accepted };
}

describe.each([
  ["ESM build (import)", SMTPServer],
  ["CommonJS build (require)", CommonJsSMTPServer],
] as const)("smtp-server patched, %s: enhancedStatusCodeFromText", (_build, Server) => {
  test("the listeners' options: the enhanced code is ours, written once", async () => {
    expect(await transaction(await start(SMTP_SERVER_REPLY_OPTIONS, Server))).toEqual({
      refused: "550 5.7.1 relay not permitted",
      accepted: "250 2.0.0 Accepted",
    });
  });

  test("with enhanced codes hidden, the text goes without ours", async () => {
    expect(await transaction(await start({ enhancedStatusCodeFromText: true } satisfies CjsSMTPServerOptions, Server))).toEqual({
      refused: "550 relay not permitted",
      accepted: "250 Accepted",
    });
  });

  test("without the option smtp-server is as upstream: its own code, and ours stays in the text", async () => {
    const { refused, accepted } = await transaction(await start({ hideENHANCEDSTATUSCODES: false }, Server));
    expect(refused).toMatch(/^550 5\.\d+\.\d+ 5\.7\.1 relay not permitted$/);
    expect(accepted).toMatch(/^250 2\.\d+\.\d+ 2\.0\.0 Accepted$/);
  });
});

describe("smtp-server patched: enhancedStatusCodeFromText", () => {
  test("the ESM build Postroom imports and the CommonJS build are two copies", () => {
    expect(CommonJsSMTPServer).not.toBe(SMTPServer);
  });

  test("the installed smtp-server is the version the patch was written for", () => {
    // A new smtp-server needs the patch made again (bun patch smtp-server), and a look at
    // the SMTPConnection internals src/smtp/server-compat.ts wraps.
    const key = `smtp-server@${smtpServerPackage.version}`;
    expect(projectPackage.dependencies["smtp-server"]).toBe(smtpServerPackage.version);
    expect((projectPackage.patchedDependencies as Record<string, string>)[key]).toBe(`patches/${key}.patch`);
    expect(smtpServerPackage.version).toBe(SMTP_SERVER_VERSION);
  });

  test("the listeners refuse to start on another smtp-server: its internals may have moved", () => {
    expect(() => assertSmtpServerVersion()).not.toThrow();
    expect(() => assertSmtpServerVersion("3.22.0")).toThrow(
      `smtp-server 3.22.0 is installed, but src/smtp/server-compat.ts was written for ${SMTP_SERVER_VERSION}`,
    );
  });
});
