// What a received message is, from its bytes and its session alone: its parsed content
// and its SPF, DKIM and DMARC verdicts. Both are CPU work on the message (mailparser;
// mailauth's canonicalization and RSA verification) and DNS, and nothing else, so the
// whole examination can run on a parse worker thread (extract-pool.ts), leaving the main
// thread the SMTP sessions and the POSTs (issue 38: on 2 cores the main thread was the
// bottleneck with the second core a third idle).
import { type AuthChecker, type AuthChecks, type AuthSession, type FirstChecks, hasDkimSignatureField } from "./auth-checks.ts";
import type { ExtractedMessage } from "./extract.ts";
import { headerSectionBytes, type ParseLimits } from "./parse.ts";

export interface ExamineJob {
  /** The message with our trace lines in front: its first `traceBytes` are ours. */
  raw: Buffer;
  limits: ParseLimits;
  traceBytes: number;
  session: AuthSession;
}

export interface Examined {
  extracted: ExtractedMessage;
  auth: AuthChecks;
}

/** How a message is examined: its sender's checks, its parse, and where SPF and DKIM run (here, unless `firstChecks`). */
export interface ExamineSteps {
  auth: AuthChecker;
  extract(raw: Buffer, limits: ParseLimits, traceBytes: number): Promise<ExtractedMessage>;
  /** SPF and DKIM of the message as sent, done elsewhere (a worker thread: extract-pool.ts). */
  firstChecks?(sent: Buffer, hasDkimSignature: boolean): Promise<FirstChecks>;
}

/**
 * Parses the message and checks its sender. SPF and DKIM go out before the parse (their
 * lookups overlap it), DMARC after (it needs the parsed From). A message the parse refuses
 * throws its refusal once the checks started for it have ended: until then a DKIM
 * verification still reads its bytes, and the caller's memory reservation must cover them.
 */
export async function examineMessage(job: ExamineJob, steps: ExamineSteps): Promise<Examined> {
  const { auth } = steps;
  // DKIM is verified on the message as sent: a signature may cover a Return-Path we replaced.
  const sent = job.raw.subarray(job.traceBytes);
  const started = checksBeforeParse(sent, job, steps);
  let extracted: ExtractedMessage;
  try {
    extracted = await steps.extract(job.raw, job.limits, job.traceBytes);
  } catch (err) {
    await started?.checks.both.catch(() => {});
    throw err;
  }
  const verdicts =
    started && started.hasDkimSignature === extracted.facts.hasDkimSignature
      ? await auth.finish(started.checks, extracted.facts)
      : await auth.check(sent, job.session, extracted.facts);
  return { extracted, auth: verdicts };
}

/**
 * SPF and DKIM started before the parse (AuthChecker.begin), for a message whose header
 * section is within the limit (one over it is refused unparsed, and is never verified).
 * Whether it has a DKIM-Signature is read from its bytes; where the parse says otherwise
 * (a header mailparser reads differently), the checks run again after it, so the verdicts
 * are those of the parsed message either way.
 */
function checksBeforeParse(sent: Buffer, job: ExamineJob, steps: ExamineSteps) {
  if (headerSectionBytes(sent) > job.limits.maxHeaderBytes) return null;
  const hasDkimSignature = hasDkimSignatureField(sent);
  const elsewhere = steps.firstChecks?.(sent, hasDkimSignature);
  return { hasDkimSignature, checks: steps.auth.begin(sent, job.session, hasDkimSignature, elsewhere) };
}
