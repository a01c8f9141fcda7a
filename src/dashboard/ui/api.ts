// Calls to the Postroom API from the dashboard: the session cookie authenticates them
// (same origin), and every call carries the dashboard header the server requires of
// writes (CSRF). Errors come back as {status, error} and are thrown as ApiFailure.

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Called when the session has ended (401): the app shows the sign-in page. */
let onSignedOut: () => void = () => {};
export const whenSignedOut = (fn: () => void) => {
  onSignedOut = fn;
};

async function request<T>(method: string, path: string, body?: unknown): Promise<{ data: T; res: Response }> {
  const headers: Record<string, string> = { "X-Postroom-Dashboard": "1", Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? null : JSON.stringify(body) });
  if (res.status === 204) return { data: undefined as T, res };
  const data = (await res.json().catch(() => null)) as { error?: string } | null;
  if (!res.ok) {
    if (res.status === 401 && path !== "/dashboard/session") onSignedOut();
    throw new ApiFailure(res.status, data?.error ?? `HTTP ${res.status}`);
  }
  return { data: data as T, res };
}

export const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => (await request<T>(method, path, body)).data;

/** A page of a list and the path of the next one (the Link header's rel="next"), if any. */
export async function list<T>(path: string): Promise<{ items: T[]; next: string | null }> {
  const { data, res } = await request<T[]>("GET", path);
  const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "");
  return { items: data, next: next ? next[1]! : null };
}

export const get = <T>(path: string) => call<T>("GET", path);

/** The account API's base path for the signed-in account. */
export const accountPath = (accountId: string, rest: string) => `/api/v0.1/${encodeURIComponent(accountId)}/${rest}`;

export interface Session {
  account_id: string;
  account_name: string;
  expires_at: string;
  outbound_account_ids: string[];
  smtp: { host: string; submission_port: number | null; submission_tls_port: number | null; starttls: boolean };
}
