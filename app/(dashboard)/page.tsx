import type { Metadata } from "next";
import { Overview } from "@/app/_components/overview";

export const metadata: Metadata = { title: "Overview" };

export default function OverviewPage() {
  return <Overview />;
}
