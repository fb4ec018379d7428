import type { Metadata } from "next";
import { AttentionInbox } from "@/app/_components/attention-inbox";

export const metadata: Metadata = { title: "Attention" };

export default async function AttentionPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { tab } = await searchParams;
  return <AttentionInbox initialTab={tab === "resolved" ? "resolved" : "open"} />;
}
