// Issue 34 on the Sent mail pages: a message scheduled with send_at (its time, and cancel
// while it waits, in the list and on its page) and the metadata it was sent with.
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { accountPath, ApiFailure, call, type Session } from "../api.ts";
import { ErrorNote, Time } from "../parts.tsx";

/** What these parts read of a sent message (E12, E13). */
export interface Scheduling {
  id: string;
  test_mode: boolean;
  send_at?: string;
  metadata?: Record<string, string>;
  recipients: { status: string }[];
}

/** Scheduled and still waiting: a send_at, and a recipient not attempted yet (E12's status:scheduled). */
export const isScheduled = (m: Scheduling): boolean =>
  !m.test_mode && m.send_at !== undefined && m.recipients.some((r) => r.status === "registration");

/** "scheduled for <time>", and a button that cancels the message while it waits. */
export function ScheduledTag({ session, message, onChanged }: { session: Session; message: Scheduling; onChanged: () => void }) {
  const [error, setError] = useState<string | null>(null);
  if (!isScheduled(message)) return null;
  const cancel = async () => {
    if (!confirm("Cancel this scheduled message? Its recipients get an error event and it is never sent.")) return;
    try {
      await call("POST", accountPath(session.account_id, `outbound_messages/${message.id}/cancel`));
      onChanged();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  return (
    <>
      <span class="tag scheduled">
        scheduled for <Time iso={message.send_at!} />
      </span>{" "}
      <button type="button" class="danger small" onClick={cancel}>
        Cancel
      </button>
      <ErrorNote error={error} />
    </>
  );
}

/** The message's send_at and metadata as facts (a <dl>'s entries). */
export function SchedulingFacts({ message }: { message: Scheduling }) {
  const metadata = Object.entries(message.metadata ?? {});
  return (
    <>
      {message.send_at && (
        <>
          <dt>Scheduled for</dt>
          <dd>
            <Time iso={message.send_at} />
          </dd>
        </>
      )}
      {metadata.length > 0 && (
        <>
          <dt>Metadata</dt>
          <dd>
            <dl class="details" aria-label="Metadata">
              {metadata.map(([k, v]) => (
                <Fragment key={k}>
                  <dt>{k}</dt>
                  <dd>{v}</dd>
                </Fragment>
              ))}
            </dl>
          </dd>
        </>
      )}
    </>
  );
}
