import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { sessionCaller } from "@/app/_lib/session";
import { LoginForm } from "./login-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Log in" };

export default async function LoginPage() {
  if (await sessionCaller()) redirect("/");
  return (
    <main id="main" className="login-page">
      <div className="login-card">
        <h1>Work Graph</h1>
        <p className="muted">Sign in with an operator or admin token to see the queue, live leases and the attention inbox.</p>
        <LoginForm />
        <details className="login-help">
          <summary>Where do I get a token?</summary>
          <p>
            <code>npm start</code> prints an admin token the first time it runs (or uses <code>WORK_GRAPH_ADMIN_TOKEN</code>). An
            admin can create operator tokens with <code>tokens.create</code> (<code>{`{ "role": "operator" }`}</code>). Agent
            tokens are for agents and cannot sign in here.
          </p>
        </details>
      </div>
    </main>
  );
}
