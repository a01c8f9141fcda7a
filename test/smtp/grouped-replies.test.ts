// RFC 2920 section 3.2 (src/smtp/server-compat.ts): on a listener with our hooks, the replies
// to a pipelined group (MAIL, RCPT, and the DATA that ends it) leave in one write, where
// smtp-server wrote one per command. Watched on the server's socket: its writes to the
// kernel (_write, or _writev for several chunks at once) while the group is answered.
// (strace of a corked Bun socket: one sendto for the three writes of a turn.)
import { afterEach, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { SMTPServer } from "smtp-server";
import { type ConnectionHooks, hookConnections } from "../../src/smtp/server-compat.ts";
import { eventually } from "../helpers/sink.ts";

const NO_LIMITS: ConnectionHooks = {
  beforeInit: () => {},
  opened: () => {},
  closed: () => {},
  command: () => null,
  auth: () => null,
  offerAuth: () => true,
  data: () => null,
  dataStarted: () => {},
  acceptHandshake: () => true,
};

let server: SMTPServer | null = null;
let client: Socket | null = null;
afterEach(async () => {
  client?.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = client = null;
});

/** Opens a session, greets, then sends `lines` in one packet; the writes the server made for their replies, and what the client read. */
async function pipelined(hooked: boolean, lines: string[], expectReplies: number) {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    logger: false,
    // MAIL answered at once, RCPT a moment later (a promise), as Postroom's listeners do.
    onMailFrom: (_address, _session, cb) => cb(),
    onRcptTo: (_address, _session, cb) => void Promise.resolve().then(() => cb()),
    onData: (stream, _session, cb) => {
      stream.resume();
      stream.on("end", () => cb(null));
    },
  });
  if (hooked) hookConnections(server, NO_LIMITS);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  let read = "";
  client = connect(port, "127.0.0.1");
  client.setEncoding("latin1");
  client.on("data", (chunk: string) => (read += chunk));
  await eventually(() => read.startsWith("220"), 5000, "the greeting");
  client.write("EHLO client.test\r\n");
  await eventually(() => /\r\n250 [^\r\n]*\r\n$/.test(read), 5000, "the EHLO reply");
  // The server's side of the session: count its writes from here on.
  const connection = [...(server as unknown as { connections: Set<{ _socket: Record<string, unknown> }> }).connections][0]!;
  const socket = connection._socket as Record<string, (...args: unknown[]) => unknown>;
  // Bun's _writev joins its chunks and hands them to _write: that is one write, counted once.
  let writes = 0;
  let inWritev = false;
  const write = socket._write!;
  socket._write = function (this: unknown, ...args: unknown[]) {
    if (!inWritev) writes++;
    return write.apply(this, args);
  };
  const writev = socket._writev;
  if (typeof writev === "function")
    socket._writev = function (this: unknown, ...args: unknown[]) {
      writes++;
      inWritev = true;
      try {
        return writev.apply(this, args);
      } finally {
        inWritev = false;
      }
    };
  const before = read.length;
  client.write(lines.map((l) => `${l}\r\n`).join(""));
  await eventually(() => read.slice(before).split("\r\n").length - 1 >= expectReplies, 5000, "the replies");
  return { writes, replies: read.slice(before) };
}

const GROUP = ["MAIL FROM:<a@sender.test>", "RCPT TO:<x@in.postroom.test>", "RCPT TO:<y@in.postroom.test>", "DATA"];

test("the replies to MAIL, RCPT and DATA sent together leave in one write", async () => {
  const { writes, replies } = await pipelined(true, GROUP, 4);
  expect(replies).toMatch(/^250 .*\r\n250 .*\r\n250 .*\r\n354 .*\r\n$/);
  expect(writes).toBe(1);
});

test("without our hooks (a test sink), smtp-server writes one reply at a time, as upstream", async () => {
  const { writes } = await pipelined(false, GROUP, 4);
  expect(writes).toBe(4);
});

test("a command outside the group (NOOP, QUIT) sends what was held first, in order", async () => {
  const { replies } = await pipelined(true, ["MAIL FROM:<a@sender.test>", "RCPT TO:<x@in.postroom.test>", "NOOP", "QUIT"], 4);
  expect(replies).toMatch(/^250 .*\r\n250 .*\r\n250 .*\r\n221 .*\r\n$/);
});
