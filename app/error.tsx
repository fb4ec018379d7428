"use client";

import { useEffect, useState } from "react";

/** Seconds between automatic retries: a database restarted by the supervisor is back within about one. */
const RETRY_SECONDS = 3;

/**
 * A page that could not be rendered on the server: in practice the database is unreachable
 * (killed, restarting) while the session is checked. Instead of Next's bare 500 page, say so
 * plainly and retry by itself, re-fetching the page from the server, until it loads. Server
 * errors reach the browser without their text (Next sends only a digest), so nothing internal
 * is shown.
 */
export default function PageError({ retry }: { error: Error & { digest?: string }; retry: () => void }) {
  const [secondsLeft, setSecondsLeft] = useState(RETRY_SECONDS);

  useEffect(() => {
    const timer = setTimeout(() => {
      if (secondsLeft > 1) return setSecondsLeft(secondsLeft - 1);
      setSecondsLeft(RETRY_SECONDS);
      retry();
    }, 1_000);
    return () => clearTimeout(timer);
  }, [secondsLeft, retry]);

  return (
    <main id="main" className="login-page" data-testid="page-error">
      <div className="login-card" role="alert">
        <h1>Work Graph is unavailable</h1>
        <p>This page could not be loaded, most likely because the server cannot reach its database right now (it may be restarting).</p>
        <p className="muted" aria-live="polite">
          Trying again in {secondsLeft} s…
        </p>
        <button type="button" className="button-primary" onClick={() => retry()}>
          Try again now
        </button>
      </div>
    </main>
  );
}
