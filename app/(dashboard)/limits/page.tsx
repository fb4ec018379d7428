import type { Metadata } from "next";
import { LimitsView } from "@/app/_components/limits-view";
import { sessionCaller } from "@/app/_lib/session";

export const metadata: Metadata = { title: "Limits" };

export default async function LimitsPage() {
  const caller = await sessionCaller();
  return <LimitsView canEdit={caller?.role === "operator" || caller?.role === "admin"} />;
}
