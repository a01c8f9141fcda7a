// A message's DATA under the memory budget (src/lib/memory-budget.ts), for both SMTP
// listeners: the SIZE= a client declares at MAIL FROM is checked against the budget (an
// early refusal, never a reservation: issue 31), a first slice is reserved at DATA before
// the 354, and the message is read into one buffer that grows, with its reservation, as
// its bytes arrive. When the budget says wait, the stream is paused (the client's bytes
// stay in its socket) until older messages give memory back; a reader that loses its
// reservation (it sent nothing, waited too long, gave way) is drained and gets 451. The
// buffer keeps room in front of the message for the header lines we add (inbound trace
// lines), so they never cost a copy of the message.
import type { SMTPServerDataStream, SMTPServerSession } from "smtp-server";
import { garbageMade, LARGE_MESSAGE_BYTES } from "../lib/gc-pacer.ts";
import { costOf, type BudgetListener, type MemoryBudget, type MessageCost, type Reservation, type Who } from "../lib/memory-budget.ts";
import { SMTP_REPLIES } from "./replies.ts";
import type { SmtpReply } from "./reply.ts";

/** The first slice reserved and allocated for a message: what a client holds before it sends. */
export const FIRST_SLICE_BYTES = 16 * 1024;
/** How much larger the buffer gets each time a message outgrows it. */
const GROWTH = 1.5;

export interface DataOptions {
  /** The listener's size limit: past it the rest is drained and `oversized` set. */
  limitBytes: number;
  /** Bytes to allocate before the first chunk (a first slice, or less when SIZE= says so). */
  firstBytes: number;
  /** Free bytes kept in front of the message in its buffer. */
  frontRoom: number;
  reservation: Reservation;
  cost: MessageCost;
}

export interface DataRead {
  /** The message (a view of the buffer, `frontRoom` bytes into it); empty when cut. */
  raw: Buffer;
  frontRoom: number;
  /** Bytes the client sent. */
  bytes: number;
  /** Larger than the listener's limit: not kept. */
  oversized: boolean;
  /** Outgrew what the budget could give it: not kept. */
  outgrown: boolean;
}

/** What a message being read holds: its buffer, times the copies it will cost (the fixed part comes once it is in). */
export const readingCost = (cost: MessageCost, bufferBytes: number): number => Math.ceil(cost.copies * bufferBytes);

/**
 * Reads the message into one buffer, growing it (and the reservation) as the bytes need;
 * while the budget has no room the stream is paused, and resumed when it has.
 */
export function readData(stream: SMTPServerDataStream, opts: DataOptions): Promise<DataRead> {
  return new Promise((resolve, reject) => {
    const reservation = opts.reservation;
    let capacity = Math.max(1, Math.min(opts.firstBytes, opts.limitBytes));
    let buf: Buffer | null = Buffer.allocUnsafe(opts.frontRoom + capacity);
    let used = 0;
    let bytes = 0;
    let oversized = false;
    let outgrown = false;
    const drop = () => {
      outgrown = true;
      buf = null;
    };
    reservation.onEvict(drop);
    const enlarge = (next: number) => {
      const grown = Buffer.allocUnsafe(opts.frontRoom + next);
      buf!.copy(grown, opts.frontRoom, opts.frontRoom, opts.frontRoom + used);
      buf = grown;
      capacity = next;
    };
    const keep = (chunk: Buffer) => {
      if (!buf) return;
      chunk.copy(buf, opts.frontRoom + used);
      used += chunk.length;
    };
    stream.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      reservation.touch();
      // The socket's chunk is garbage once copied (or dropped): a large message's add up.
      if (bytes > LARGE_MESSAGE_BYTES) garbageMade(chunk.length);
      if (!buf) return;
      if (bytes > opts.limitBytes) {
        oversized = true;
        buf = null;
        return;
      }
      if (bytes <= capacity) return keep(chunk);
      const next = Math.min(opts.limitBytes, Math.max(bytes, Math.ceil(capacity * GROWTH)));
      const granted = reservation.grow(readingCost(opts.cost, opts.frontRoom + next));
      if (granted === true) {
        enlarge(next);
        return keep(chunk);
      }
      if (granted === false) return drop();
      // No room now: nothing more is read until older messages give memory back.
      stream.pause();
      void granted.then((ok) => {
        if (ok && buf) {
          enlarge(next);
          keep(chunk);
        } else drop();
        stream.resume();
      });
    });
    stream.once("end", () => {
      const cut = !buf || oversized || stream.sizeExceeded;
      resolve({
        raw: cut ? Buffer.alloc(0) : buf!.subarray(opts.frontRoom, opts.frontRoom + used),
        frontRoom: cut ? 0 : opts.frontRoom,
        bytes,
        oversized: oversized || stream.sizeExceeded,
        outgrown,
      });
    });
    stream.once("error", reject);
  });
}

/**
 * The budget of one SMTP listener's sessions: the declared SIZE at MAIL FROM, the
 * reservation taken at DATA and handed to onData, and whether a session's message waits.
 */
export class SessionBudget {
  private readonly declared = new WeakMap<SMTPServerSession, number>();
  private readonly held = new WeakMap<SMTPServerSession, Reservation>();
  private readonly reading = new WeakMap<SMTPServerSession, Reservation>();

  constructor(
    private readonly budget: MemoryBudget,
    private readonly listener: BudgetListener,
    /** What a message costs, and the room kept in front of it. */
    private readonly shape: () => { cost: MessageCost; frontRoom: number; limitBytes: number },
    /** Who the session's client is to the budget: a stranger (by its address) or not. */
    private readonly who: (session: SMTPServerSession) => Who,
  ) {}

  /**
   * MAIL FROM with its SIZE= (if any): 451 when a message that large could not be taken
   * now. Only a refusal: nothing is reserved for what a client merely declares.
   */
  mailFrom(session: SMTPServerSession, sizeParam: unknown): SmtpReply | null {
    this.held.get(session)?.release();
    this.held.delete(session);
    this.declared.delete(session);
    const size = Number(sizeParam);
    if (sizeParam === undefined || !Number.isSafeInteger(size) || size <= 0) return null;
    const { cost, frontRoom } = this.shape();
    if (!this.budget.fits(costOf(cost, frontRoom + size), this.who(session))) {
      this.budget.refused(this.listener);
      return SMTP_REPLIES.insufficientMemory;
    }
    this.declared.set(session, size);
    return null;
  }

  /**
   * DATA, before the 354: the reservation of a first slice; when older messages hold the
   * room, the answer waits for it (oldest first, as a message's growing does); 451 when
   * it does not fit at all, or the wait ends without room.
   */
  beforeData(session: SMTPServerSession): SmtpReply | null | Promise<SmtpReply | null> {
    this.held.get(session)?.release();
    const { cost, frontRoom } = this.shape();
    const reservation = this.budget.reserve(0, this.listener, this.who(session), true);
    if (!reservation) return SMTP_REPLIES.insufficientMemory;
    this.held.set(session, reservation);
    const granted = reservation.grow(readingCost(cost, frontRoom + this.firstBytes(session)));
    const verdict = (ok: boolean) => {
      if (ok) return null;
      reservation.release();
      this.held.delete(session);
      this.budget.refused(this.listener);
      return SMTP_REPLIES.insufficientMemory;
    };
    return typeof granted === "boolean" ? verdict(granted) : granted.then(verdict);
  }

  /** The connection closed: a reservation taken for a DATA that never started is given back. */
  closed(session: SMTPServerSession): void {
    this.held.get(session)?.release();
    this.held.delete(session);
  }

  private firstBytes(session: SMTPServerSession): number {
    return Math.min(this.shape().limitBytes, this.declared.get(session) ?? FIRST_SLICE_BYTES, FIRST_SLICE_BYTES);
  }

  private reserve(session: SMTPServerSession): Reservation | null {
    const { cost, frontRoom } = this.shape();
    return this.budget.reserve(readingCost(cost, frontRoom + this.firstBytes(session)), this.listener, this.who(session), true);
  }

  /**
   * onData: the options to read the message with, holding the reservation beforeData took
   * (or one taken now), or null when the budget has no room (drain it and answer 451). The
   * caller releases the reservation when the message is done, on every path.
   */
  take(session: SMTPServerSession): DataOptions | null {
    const { cost, frontRoom, limitBytes } = this.shape();
    const reservation = this.held.get(session) ?? this.reserve(session);
    this.held.delete(session);
    if (!reservation) return null;
    this.reading.set(session, reservation);
    return { limitBytes, firstBytes: this.firstBytes(session), frontRoom, reservation, cost };
  }

  /** Whether the session's message is waiting for memory (its stream paused by us, not slow). */
  waiting(session: SMTPServerSession): boolean {
    const r = this.reading.get(session);
    return r?.active === true && r.waiting;
  }

  /** The message is in: its reservation fitted to what it really is (a cut one holds nothing more). */
  settle(session: SMTPServerSession, read: DataRead, options: DataOptions): void {
    this.reading.delete(session);
    options.reservation.doneReading();
    options.reservation.force(read.raw.length === 0 ? 0 : costOf(options.cost, read.frontRoom + read.raw.length));
  }
}
