import type { Metadata } from "next";
import { ImportView } from "@/app/_components/import-view";
import { sessionCaller } from "@/app/_lib/session";
import { Empty } from "@/app/_components/ui";

export const metadata: Metadata = { title: "Import" };

export default async function ImportPage() {
  const caller = await sessionCaller();
  if (caller?.role !== "operator" && caller?.role !== "admin") {
    return (
      <>
        <div className="page-head">
          <h1>Import</h1>
        </div>
        <Empty>Importing plans is for operators.</Empty>
      </>
    );
  }
  return <ImportView />;
}
