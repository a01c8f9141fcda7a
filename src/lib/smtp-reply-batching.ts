// Replies to pipelined commands leave in one packet, as Postfix's smtpd does (it flushes
// its output only once no more pipelined input is waiting): a client that sends MAIL,
// RCPT and DATA together gets 250, 250 and 354 in one write instead of three, which
// saves two system calls per message here and two wake-ups of the client.
//
// Reply lines written during one turn of the event loop are held and sent in one write at
// its end (setImmediate: after the promise callbacks that answer RCPT). A 220 goes out at
// once with whatever is held: the greeting, and the answer to STARTTLS, after which the
// socket turns into a TLS one and nothing held in plaintext may follow it. end() sends
// whatever is held first. (Socket.cork() does the same job, but measured slower in Bun:
// its writev path cost more than the system calls it saved.) The reply that ends a
// transaction goes out at once too (answeredAtOnce).
import type { Server, Socket } from "node:net";
import { TurnBuffer } from "./turn-buffer.ts";

/** Set while a callback wrapped by answeredAtOnce runs. */
let replyAtOnce = false;

/**
 * The end-of-DATA callback, wrapped so that the reply it writes leaves at once instead of
 * at the end of the turn. That reply ends the transaction: the client sends nothing more
 * before it has read it, so holding it batches nothing. And it is often written from a timer
 * or an immediate (after a grouped commit): held there, it would wait for the next I/O
 * poll, behind every other connection's input. (A reply that smtp-server defers
 * until the message has been read to its end is not written inside the callback, and is
 * held as usual.)
 */
export function answeredAtOnce<A extends unknown[]>(callback: (...args: A) => void): (...args: A) => void {
  return (...args) => {
    replyAtOnce = true;
    try {
      callback(...args);
    } finally {
      replyAtOnce = false;
    }
  };
}

export function batchRepliesPerTurn(socket: Socket): void {
  const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const replies = new TurnBuffer((text) => {
    if (!socket.destroyed) write(text);
  });
  socket.write = ((chunk: unknown, ...rest: unknown[]) => {
    // Only reply lines without a callback are held; anything else keeps its order behind them.
    if (typeof chunk !== "string" || rest.length > 0) {
      replies.flush();
      return write(chunk, ...rest);
    }
    replies.add(chunk);
    if (replyAtOnce || chunk.startsWith("220")) replies.flush();
    return true;
  }) as Socket["write"];
  const end = socket.end.bind(socket) as (...args: unknown[]) => Socket;
  socket.end = ((...args: unknown[]) => {
    replies.flush();
    return end(...args);
  }) as Socket["end"];
}

/**
 * Applies batchRepliesPerTurn to every connection of an smtp-server listening in
 * plaintext (port 25, and 587 before STARTTLS). Not for implicit TLS: smtp-server wraps
 * those sockets itself, and the wrapped one is what it writes to.
 */
export function batchRepliesOf(server: { server: Server }): void {
  // Before smtp-server's own listener, so that even the greeting goes through it.
  server.server.prependListener("connection", (socket: Socket) => batchRepliesPerTurn(socket));
}
