import type { Metadata } from "next";
import { WebhooksView } from "@/app/_components/webhooks-view";
import { sessionCaller } from "@/app/_lib/session";

export const metadata: Metadata = { title: "Webhooks" };

export default async function WebhooksPage() {
  const caller = await sessionCaller();
  if (caller?.role !== "admin") {
    return (
      <>
        <div className="page-head">
          <h1>Webhooks</h1>
        </div>
        <p className="callout">Only an admin can manage webhooks. Sign in with an admin token.</p>
      </>
    );
  }
  return <WebhooksView />;
}
