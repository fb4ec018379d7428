import type { Metadata } from "next";
import { PeopleView } from "@/app/_components/people-view";
import { sessionCaller } from "@/app/_lib/session";

export const metadata: Metadata = { title: "People" };

export default async function PeoplePage() {
  const caller = await sessionCaller();
  if (caller?.role !== "admin") {
    return (
      <>
        <div className="page-head">
          <h1>People</h1>
        </div>
        <p className="callout">Only an admin can manage people.</p>
      </>
    );
  }
  return <PeopleView />;
}
