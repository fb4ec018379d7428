import type { Metadata } from "next";
import { UnroutableView } from "@/app/_components/unroutable-view";

export const metadata: Metadata = { title: "Unroutable items" };

export default function UnroutablePage() {
  return <UnroutableView />;
}
