import type { Metadata } from "next";
import Link from "next/link";
import { oidcSettings } from "@/server/config";
import { pageContext } from "@/app/_lib/session";
import type { Refusal } from "@/server/auth/oidc";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign-in refused" };

const WHY: Record<Refusal, string> = {
  no_group: "You signed in, but your account is in none of the groups that may use Work Graph.",
  disabled: "An admin has disabled your access to Work Graph.",
  invalid: "The sign-in came back without the state this browser started it with (a stale or forged link).",
  expired: "This sign-in was already used or has expired.",
  provider: "The identity provider's answer could not be verified.",
};

export default async function RefusedPage({ searchParams }: { searchParams: Promise<{ reason?: string }> }) {
  const { reason } = await searchParams;
  const refusal: Refusal = reason !== undefined && reason in WHY ? (reason as Refusal) : "provider";
  const settings = oidcSettings();
  const groups = settings ? [...settings.adminGroups, ...settings.operatorGroups] : [];
  const admins = refusal === "no_group" || refusal === "disabled" ? (await pageContext()).adminContacts : [];
  return (
    <main id="main" className="login-page">
      <div className="login-card">
        <h1>Sign-in refused</h1>
        <p data-testid="refusal">{WHY[refusal]}</p>
        {refusal === "no_group" && groups.length > 0 ? (
          <p>
            Ask an admin to add you to one of these groups: <strong>{groups.join(", ")}</strong>.
          </p>
        ) : null}
        {refusal === "no_group" || refusal === "disabled" ? (
          <p>{admins.length > 0 ? `Admins: ${admins.join(", ")}.` : "Ask whoever runs Work Graph for your team."}</p>
        ) : (
          <p>Start again from the login page.</p>
        )}
        <p>
          <Link href="/login">Back to the login page</Link>
        </p>
      </div>
    </main>
  );
}
