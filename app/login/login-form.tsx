"use client";

import { useState, type FormEvent } from "react";
import { CSRF_HEADER } from "@work-graph/contract";

export function LoginForm() {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const response = await fetch("/api/session", {
        method: "POST",
        headers: { "content-type": "application/json", [CSRF_HEADER]: "1" },
        body: JSON.stringify({ token }),
      });
      if (response.ok) {
        window.location.assign("/");
        return;
      }
      const body = (await response.json().catch(() => null)) as { message?: string } | null;
      setError(body?.message ?? `Login failed (HTTP ${response.status}).`);
    } catch {
      setError("Could not reach the server. Is it running?");
    }
    setBusy(false);
  }

  return (
    <form onSubmit={submit} className="stack" noValidate>
      <label htmlFor="token">Token</label>
      <input
        id="token"
        name="token"
        type="password"
        autoComplete="off"
        spellCheck={false}
        required
        placeholder="wgo_…"
        value={token}
        onChange={(event) => setToken(event.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? "login-error" : undefined}
      />
      {error ? (
        <p id="login-error" className="error" role="alert">
          {error}
        </p>
      ) : null}
      <button type="submit" className="button-primary" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
