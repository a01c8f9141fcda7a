// A kept message (its address had store_messages) in the incoming Details: download it,
// show its headers and the payload its target was posted (GET .../message), and post it
// to the target again (POST .../post_again), which records a new incoming status.
import { useState } from "preact/hooks";
import { accountPath, call, errorText, type Session } from "../api.ts";
import { ErrorNote } from "../parts.tsx";

interface KeptMessageView {
  size: number;
  format: string;
  headers: { name: string; value: string }[];
  payload: { content_type: string; body: string; truncated: boolean } | null;
}

/** A header field longer than this may scroll in its cell (table.headers .value). */
const LONG_HEADER_CHARS = 300;

export function KeptMessage({
  session,
  addressId,
  statusId,
  storeUrl,
  onPosted,
}: {
  session: Session;
  addressId: string;
  statusId: string;
  storeUrl: string;
  onPosted: () => void;
}) {
  const [view, setView] = useState<KeptMessageView | null>(null);
  const [reply, setReply] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const path = (action: string) =>
    accountPath(
      session.account_id,
      `incoming_statuses/${encodeURIComponent(statusId)}/${action}?address_id=${encodeURIComponent(addressId)}`,
    );
  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const show = () => run(async () => setView(await call<KeptMessageView>("GET", path("message"))));
  const postAgain = () =>
    run(async () => {
      setReply((await call<{ smtp_reply: string }>("POST", path("post_again"))).smtp_reply);
      onPosted();
    });
  return (
    <div class="kept">
      <div class="buttons">
        <a href={storeUrl}>Download (.eml)</a>
        <button type="button" onClick={show} disabled={busy}>
          Headers and payload
        </button>
        <button type="button" onClick={postAgain} disabled={busy}>
          Post again
        </button>
      </div>
      <ErrorNote error={error} />
      {reply && (
        <p role="status">
          Posted again: a sender would have been told <code>{reply}</code>. The new status is first in the list.
        </p>
      )}
      {view && (
        <>
          <h3>Headers</h3>
          <table class="headers">
            <caption class="visually-hidden">Header fields as the sender sent them</caption>
            <tbody>
              {view.headers.map((h, i) => (
                <tr key={i}>
                  <th scope="row">{h.name}</th>
                  <td>
                    {/* A long one scrolls: the keyboard can reach it. */}
                    <div class="value" tabIndex={h.value.length > LONG_HEADER_CHARS ? 0 : undefined}>
                      {h.value}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <h3>Payload ({view.format})</h3>
          {view.payload ? (
            <>
              <p class="hint">
                {view.payload.content_type}; attachments' contents are not shown.{view.payload.truncated ? " Cut at 256 KiB." : ""}
              </p>
              <pre class="payload" tabIndex={0} aria-label="Payload posted">
                {view.payload.body}
              </pre>
            </>
          ) : (
            <p>This message was kept without its envelope: the payload cannot be shown.</p>
          )}
        </>
      )}
    </div>
  );
}
