// The admin view's Queue page: the queue by destination (GET /dashboard/api/queue) with
// hold, release, retry and cancel for each destination (POST /dashboard/api/queue/{action}),
// the same actions as the operator API and `postroom queue`.
import { useEffect, useState } from "preact/hooks";
import { call, errorText, get } from "../api.ts";
import { ErrorNote, TableHead, Time } from "../parts.tsx";

interface DestinationRow {
  destination: string;
  queued: number;
  held: number;
  paused: boolean;
  oldest_at: string;
  last_response: string | null;
}

type Action = "hold" | "release" | "retry" | "cancel";

const DONE: Record<Action, string> = { hold: "held", release: "released", retry: "due now", cancel: "cancelled" };

export function Queue() {
  const [rows, setRows] = useState<DestinationRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = () =>
    get<DestinationRow[]>("/dashboard/api/queue").then(
      (r) => setRows(r),
      (err) => setError(errorText(err)),
    );
  useEffect(() => {
    void load();
  }, []);
  const act = async (action: Action, destination: string) => {
    setError(null);
    if (
      action === "cancel" &&
      !confirm(`Cancel every recipient waiting for ${destination}? Each gets an error event and is not tried again.`)
    )
      return;
    try {
      const { affected } = await call<{ affected: number }>("POST", `/dashboard/api/queue/${action}`, { destination });
      setNote(`${destination}: ${affected} recipient${affected === 1 ? "" : "s"} ${DONE[action]}.`);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <section aria-labelledby="h-queue">
      <h1 id="h-queue">Queue</h1>
      <p class="hint">Recipients waiting for delivery, by destination. Held recipients are never attempted until released, on any node.</p>
      <ErrorNote error={error} />
      {note && <p role="status">{note}</p>}
      {rows && rows.length === 0 && <p>The queue is empty.</p>}
      {rows && rows.length > 0 && (
        <table>
          <TableHead columns={["Destination", "Queued", "Held", "Paused", "Oldest", "Last reply", { hidden: "Actions" }]} />
          <tbody>
            {rows.map((r) => (
              <tr key={r.destination}>
                <td>{r.destination}</td>
                <td>{r.queued}</td>
                <td>{r.held}</td>
                <td>{r.paused ? "yes" : "no"}</td>
                <td>
                  <Time iso={r.oldest_at} />
                </td>
                <td>{r.last_response ?? "-"}</td>
                <td>
                  <div class="buttons">
                    {r.queued > 0 && (
                      <button type="button" onClick={() => act("hold", r.destination)} aria-label={`Hold ${r.destination}`}>
                        Hold
                      </button>
                    )}
                    {r.held > 0 && (
                      <button type="button" onClick={() => act("release", r.destination)} aria-label={`Release ${r.destination}`}>
                        Release
                      </button>
                    )}
                    {r.queued > 0 && (
                      <button type="button" onClick={() => act("retry", r.destination)} aria-label={`Retry now ${r.destination}`}>
                        Retry now
                      </button>
                    )}
                    <button
                      type="button"
                      class="danger"
                      onClick={() => act("cancel", r.destination)}
                      aria-label={`Cancel ${r.destination}`}
                    >
                      Cancel
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
