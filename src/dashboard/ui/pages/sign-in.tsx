import { useState } from "preact/hooks";
import { ApiFailure, call, type ServerSession } from "../api.ts";

export function SignIn({ onSignedIn }: { onSignedIn: (s: ServerSession) => void }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await call<ServerSession>("POST", "/dashboard/session", { token }));
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : "The server could not be reached.");
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Postroom</h1>
      <form onSubmit={submit}>
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="current-password"
          required
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <p class="hint">One of your account's API tokens (api_tokens in the config), or an operator token (dashboard.admin_tokens).</p>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
