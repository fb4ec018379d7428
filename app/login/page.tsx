import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { sessionCaller } from "@/app/_lib/session";
import { oidcProvider } from "@/server/auth/oidc";
import { tokenLoginEnabled } from "@/server/config";
import { LoginForm } from "./login-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Log in" };

export default async function LoginPage() {
  if (await sessionCaller()) redirect("/");
  const provider = await oidcProvider();
  const tokenLogin = tokenLoginEnabled();
  return (
    <main id="main" className="login-page">
      <div className="login-card">
        <h1>Work Graph</h1>
        <p className="muted">Sign in to see the queue, live leases and the attention inbox.</p>
        {provider.status === "ready" ? (
          <p>
            {/* A plain link: the sign-in leaves for the provider's own page. */}
            <a className="button-primary sign-in-link" href="/api/auth/oidc/login">
              Sign in with {provider.name}
            </a>
          </p>
        ) : null}
        {provider.status === "unavailable" ? (
          <p className="error" role="alert">
            Sign-in with {provider.name} is unavailable right now: Work Graph cannot reach the identity provider. Try again in a
            minute{tokenLogin ? ", or log in with a token" : ""}.
          </p>
        ) : null}
        {tokenLogin ? (
          <>
            {provider.status !== "off" ? <p className="muted">Or log in with an operator or admin token:</p> : null}
            <LoginForm />
            <details className="login-help">
              <summary>Where do I get a token?</summary>
              <p>
                <code>npm start</code> prints an admin token the first time it runs (or uses <code>WORK_GRAPH_ADMIN_TOKEN</code>). An
                admin can create operator tokens with <code>tokens.create</code> (<code>{`{ "role": "operator" }`}</code>). Agent
                tokens are for agents and cannot sign in here.
              </p>
            </details>
          </>
        ) : null}
      </div>
    </main>
  );
}
