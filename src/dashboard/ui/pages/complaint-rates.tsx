// The overview's complaint rates: spam complaints (ARF reports) per delivered message of
// each of the account's outbound accounts over the last 24 hours (GET /stats), against the
// 0.3 % above which Gmail and Yahoo refuse bulk mail.

export interface ComplaintRate {
  outbound_account_id: string;
  delivered: number;
  complaints: number;
  rate: number;
}

/** Gmail's and Yahoo's limit for bulk senders. */
const PROVIDER_LIMIT = 0.003;

const percent = (x: number) => `${(x * 100).toFixed(2)} %`;

export function ComplaintRates({ rates }: { rates: ComplaintRate[] }) {
  if (rates.length === 0) return null;
  return (
    <section aria-labelledby="h-complaints">
      <h2 id="h-complaints">Spam complaints, last 24 hours</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Outbound account</th>
            <th scope="col">Delivered</th>
            <th scope="col">Complaints</th>
            <th scope="col">Rate</th>
          </tr>
        </thead>
        <tbody>
          {rates.map((r) => (
            <tr key={r.outbound_account_id}>
              <td>
                <code>{r.outbound_account_id}</code>
              </td>
              <td>{r.delivered}</td>
              <td>{r.complaints}</td>
              <td>
                <span class={`status ${r.rate > PROVIDER_LIMIT ? "rejected" : "successful"}`}>{percent(r.rate)}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">Gmail and Yahoo refuse bulk mail from senders above 0.3 %.</p>
    </section>
  );
}
