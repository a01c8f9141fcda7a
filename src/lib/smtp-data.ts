// A message's DATA under the memory budget (src/lib/memory-budget.ts), for both SMTP
// listeners: the SIZE= a client declares at MAIL FROM is checked against the budget, the
// reservation is taken at DATA before the 354 (the declared size, or a first slice when
// none was declared), and the message is read into one buffer that grows, with its
// reservation, only as far as the budget lets it (else the rest is drained and the
// client gets 451). The buffer keeps room in front of the message for the header lines
// we add (inbound trace lines), so they never cost a copy of the message.
import type { SMTPServerDataStream, SMTPServerSession } from "smtp-server";
import { garbageMade, LARGE_MESSAGE_BYTES } from "./gc-pacer.ts";
import { costOf, type BudgetListener, type MemoryBudget, type MessageCost, type Reservation } from "./memory-budget.ts";
import { SMTP_REPLIES } from "./smtp-replies.ts";
import type { SmtpReply } from "./smtp-reply.ts";

/** The first slice reserved and allocated for a message of undeclared size. */
export const UNDECLARED_FIRST_BYTES = 64 * 1024;
/** How much larger the buffer gets each time a message outgrows it. */
const GROWTH = 1.5;

export interface DataOptions {
  /** The listener's size limit: past it the rest is drained and `oversized` set. */
  limitBytes: number;
  /** Bytes to allocate before the first chunk: the declared SIZE, or a first slice. */
  expectedBytes: number;
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

/** Reads the message into one buffer, growing it (and the reservation) as the bytes need. */
export function readData(stream: SMTPServerDataStream, opts: DataOptions): Promise<DataRead> {
  return new Promise((resolve, reject) => {
    let capacity = Math.max(1, Math.min(opts.expectedBytes, opts.limitBytes));
    let buf: Buffer | null = Buffer.allocUnsafe(opts.frontRoom + capacity);
    let used = 0;
    let bytes = 0;
    let oversized = false;
    let outgrown = false;
    stream.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      // The socket's chunk is garbage once copied (or dropped): a large message's add up.
      if (bytes > LARGE_MESSAGE_BYTES) garbageMade(chunk.length);
      if (!buf) return;
      if (bytes > opts.limitBytes) {
        oversized = true;
        buf = null;
        return;
      }
      if (bytes > capacity) {
        const next = Math.min(opts.limitBytes, Math.max(bytes, Math.ceil(capacity * GROWTH)));
        if (costOf(opts.cost, next) > opts.reservation.bytes && !opts.reservation.resize(costOf(opts.cost, next))) {
          outgrown = true;
          buf = null;
          return;
        }
        const grown = Buffer.allocUnsafe(opts.frontRoom + next);
        buf.copy(grown, opts.frontRoom, opts.frontRoom, opts.frontRoom + used);
        buf = grown;
        capacity = next;
      }
      chunk.copy(buf, opts.frontRoom + used);
      used += chunk.length;
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
 * reservation taken at DATA and handed to onData.
 */
export class SessionBudget {
  private readonly declared = new WeakMap<SMTPServerSession, number>();
  private readonly held = new WeakMap<SMTPServerSession, Reservation>();

  constructor(
    private readonly budget: MemoryBudget,
    private readonly listener: BudgetListener,
    /** What a message costs, and the room kept in front of it. */
    private readonly shape: () => { cost: MessageCost; frontRoom: number; limitBytes: number },
  ) {}

  /** MAIL FROM with its SIZE= (if any): 451 when a message that large could not be taken now. */
  mailFrom(session: SMTPServerSession, sizeParam: unknown): SmtpReply | null {
    this.held.get(session)?.release();
    this.held.delete(session);
    this.declared.delete(session);
    const size = Number(sizeParam);
    if (sizeParam === undefined || !Number.isSafeInteger(size) || size <= 0) return null;
    const { cost, frontRoom } = this.shape();
    if (!this.budget.fits(costOf(cost, frontRoom + size))) {
      this.budget.refused(this.listener);
      return SMTP_REPLIES.insufficientMemory;
    }
    this.declared.set(session, size);
    return null;
  }

  /** DATA, before the 354: the reservation for the message, or 451. */
  beforeData(session: SMTPServerSession): SmtpReply | null {
    this.held.get(session)?.release();
    const { cost, frontRoom, limitBytes } = this.shape();
    const expected = Math.min(limitBytes, this.declared.get(session) ?? UNDECLARED_FIRST_BYTES);
    const reservation = this.budget.reserve(costOf(cost, frontRoom + expected), this.listener);
    if (!reservation) return SMTP_REPLIES.insufficientMemory;
    this.held.set(session, reservation);
    return null;
  }

  /**
   * onData: the options to read the message with, holding the reservation beforeData took
   * (or one taken now), or null when the budget has no room (drain it and answer 451). The
   * caller releases the reservation when the message is done, on every path.
   */
  take(session: SMTPServerSession): DataOptions | null {
    const { cost, frontRoom, limitBytes } = this.shape();
    const expected = Math.min(limitBytes, this.declared.get(session) ?? UNDECLARED_FIRST_BYTES);
    const reservation = this.held.get(session) ?? this.budget.reserve(costOf(cost, frontRoom + expected), this.listener);
    this.held.delete(session);
    return reservation ? { limitBytes, expectedBytes: expected, frontRoom, reservation, cost } : null;
  }

  /** The message is in: its reservation fitted to what it really is (a cut one holds nothing more). */
  static settle(read: DataRead, options: DataOptions): void {
    options.reservation.resize(read.raw.length === 0 ? 0 : costOf(options.cost, read.frontRoom + read.raw.length));
  }
}
