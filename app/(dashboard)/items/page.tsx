import type { Metadata } from "next";
import { ItemsView } from "@/app/_components/items-view";

export const metadata: Metadata = { title: "Items" };

export default async function ItemsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { stage, q } = await searchParams;
  return <ItemsView initialStage={typeof stage === "string" ? stage : ""} initialSearch={typeof q === "string" ? q : ""} />;
}
