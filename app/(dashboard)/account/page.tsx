import type { Metadata } from "next";
import { PersonalTokensView } from "@/app/_components/people-view";
import { sessionCaller } from "@/app/_lib/session";

export const metadata: Metadata = { title: "Your CLI tokens" };

export default async function AccountPage() {
  const caller = await sessionCaller();
  if (!caller?.person) {
    return (
      <>
        <div className="page-head">
          <h1>Your CLI tokens</h1>
        </div>
        <p className="callout">CLI tokens of your own are for people who signed in with the identity provider. You logged in with a token.</p>
      </>
    );
  }
  return <PersonalTokensView />;
}
