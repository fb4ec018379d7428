import type { Metadata } from "next";
import { WorkersView } from "@/app/_components/workers-view";

export const metadata: Metadata = { title: "Workers" };

export default function WorkersPage() {
  return <WorkersView />;
}
