// (beyond) Waiting: received mail kept because its address's target failed
// (on_target_failure = "queue"): since when it waits, the POSTs made, the target's last
// answer, when it is posted next, and "Try now" (posted within a second by one node).
import { useState } from "preact/hooks";
import { accountPath, call, errorText, type Session } from "../api.ts";
import { ErrorNote, TableHead, Time } from "../parts.tsx";
import { link } from "../router.ts";
import { useList } from "../use-list.ts";

interface Waiting {
  id: string;
  address_id: string;
  from: string;
  to: string[];
  subject: string | null;
  size: number;
  attempts: number;
  created_at: string;
  next_attempt_at: string;
  last_response: string | null;
}

export function WaitingMail({ session }: { session: Session }) {
  const list = useList<Waiting>(accountPath(session.account_id, "inbound_queue"));
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const tryNow = async (w: Waiting) => {
    setError(null);
    try {
      await call("POST", accountPath(session.account_id, `inbound_queue/${w.id}/try_now`));
      setNote(`"${w.subject ?? "(no subject)"}" is posted to its target now; reload to see the answer.`);
      list.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <section aria-labelledby="h-waiting">
      <h1 id="h-waiting">Waiting for a target</h1>
      <p>
        Mail to addresses set to keep mail when their target fails (<code>on_target_failure = "queue"</code>), accepted and posted again on{" "}
        <code>inbound.retry_delays</code> until <code>inbound.max_queue_time</code>. Oldest first.
      </p>
      <ErrorNote error={error ?? list.error} />
      {note && <p role="status">{note}</p>}
      <div class="buttons">
        <button type="button" onClick={() => list.reload()}>
          Reload
        </button>
      </div>
      <table>
        <caption class="visually-hidden">Received mail waiting for its target, oldest first</caption>
        <TableHead
          columns={[
            "Waiting since",
            "Address",
            "From",
            "Subject",
            "Attempts",
            "Target's last answer",
            "Next attempt",
            { hidden: "Action" },
          ]}
        />
        <tbody>
          {list.items.map((w) => (
            <tr key={w.id}>
              <td>
                <Time iso={w.created_at} />
              </td>
              <td>
                <a {...link(`/addresses/${w.address_id}`)}>{w.to.join(", ")}</a>
              </td>
              <td>{w.from || "(empty)"}</td>
              <td>{w.subject ?? "(no subject)"}</td>
              <td>{w.attempts}</td>
              <td>{w.last_response ?? "(none)"}</td>
              <td>
                <Time iso={w.next_attempt_at} />
              </td>
              <td>
                <button type="button" onClick={() => tryNow(w)}>
                  Try now
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!list.loading && list.items.length === 0 && !list.error && <p>No mail is waiting for a target.</p>}
    </section>
  );
}
