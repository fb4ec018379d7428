import type { Metadata } from "next";
import { LeasesView } from "@/app/_components/leases-view";

export const metadata: Metadata = { title: "Leases" };

export default async function LeasesPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { worker } = await searchParams;
  return <LeasesView initialWorker={typeof worker === "string" ? worker : ""} />;
}
