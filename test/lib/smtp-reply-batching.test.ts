// Reply lines of one event-loop turn leave in one write; a 220 (greeting, STARTTLS) and
// end() never wait; anything but a plain reply line keeps its place behind them. The
// socket is a recording stand-in: what is tested is the order and grouping of writes,
// which a real TCP peer cannot observe reliably (it may split or merge reads).
import { describe, expect, test } from "bun:test";
import type { Socket } from "node:net";
import { answeredAtOnce, batchRepliesPerTurn } from "../../src/lib/smtp-reply-batching.ts";

function recordingSocket() {
  const writes: string[] = [];
  const socket = {
    destroyed: false,
    write: (chunk: unknown, cb?: () => void) => {
      writes.push(typeof chunk === "string" ? chunk : `<${(chunk as Buffer).length} bytes>`);
      cb?.();
      return true;
    },
    end: () => {
      writes.push("<end>");
      return socket;
    },
  };
  batchRepliesPerTurn(socket as unknown as Socket);
  return { socket: socket as unknown as Socket & { destroyed: boolean }, writes };
}

const nextTurn = () => new Promise((r) => setImmediate(r));

describe("batchRepliesPerTurn", () => {
  test("replies to pipelined MAIL, RCPT (answered in a promise callback) and DATA leave in one write", async () => {
    const { socket, writes } = recordingSocket();
    socket.write("250 2.1.0 Accepted\r\n");
    await Promise.resolve();
    socket.write("250 2.1.5 Accepted\r\n");
    socket.write("354 End data with <CR><LF>.<CR><LF>\r\n");
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(["250 2.1.0 Accepted\r\n250 2.1.5 Accepted\r\n354 End data with <CR><LF>.<CR><LF>\r\n"]);
    socket.write("250 2.0.0 Accepted\r\n");
    await nextTurn();
    expect(writes.at(-1)).toBe("250 2.0.0 Accepted\r\n");
  });

  test("a 220 goes out at once, with what was held before it (STARTTLS must not wait)", () => {
    const { socket, writes } = recordingSocket();
    socket.write("250 2.0.0 OK\r\n");
    socket.write("220 2.0.0 Ready to start TLS\r\n");
    expect(writes).toEqual(["250 2.0.0 OK\r\n220 2.0.0 Ready to start TLS\r\n"]);
  });

  test("the reply written by an end-of-DATA callback leaves at once; later replies are held again", async () => {
    const { socket, writes } = recordingSocket();
    const answer = answeredAtOnce((code: number, text: string) => socket.write(`${code} ${text}\r\n`));
    socket.write("250 2.1.0 held\r\n");
    answer(250, "2.0.0 Accepted");
    expect(writes).toEqual(["250 2.1.0 held\r\n250 2.0.0 Accepted\r\n"]);
    socket.write("250 2.1.0 next\r\n");
    expect(writes).toHaveLength(1);
    await nextTurn();
    expect(writes.at(-1)).toBe("250 2.1.0 next\r\n");
  });

  test("a callback that throws still ends the at-once window", () => {
    const { socket, writes } = recordingSocket();
    const answer = answeredAtOnce(() => {
      throw new Error("boom");
    });
    expect(() => answer()).toThrow("boom");
    socket.write("250 later\r\n");
    expect(writes).toEqual([]);
  });

  test("end() sends what is held first (421 then close)", () => {
    const { socket, writes } = recordingSocket();
    socket.write("421 4.4.2 Timeout - closing connection\r\n");
    socket.end();
    expect(writes).toEqual(["421 4.4.2 Timeout - closing connection\r\n", "<end>"]);
  });

  test("a buffer or a write with a callback is not held and keeps its order", () => {
    const { socket, writes } = recordingSocket();
    let called = false;
    socket.write("250 OK\r\n");
    socket.write(Buffer.from("raw"));
    socket.write("354 go\r\n", () => (called = true));
    expect(writes).toEqual(["250 OK\r\n", "<3 bytes>", "354 go\r\n"]);
    expect(called).toBe(true);
  });

  test("nothing is written to a destroyed socket", async () => {
    const { socket, writes } = recordingSocket();
    socket.write("250 OK\r\n");
    socket.destroyed = true;
    await nextTurn();
    expect(writes).toEqual([]);
  });
});
