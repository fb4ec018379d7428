import type { Metadata } from "next";
import { ItemView } from "@/app/_components/item-view";

interface Props {
  params: Promise<{ id: string }>;
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { id } = await params;
  return { title: `Item ${decodeURIComponent(id)}` };
}

export default async function ItemPage({ params }: Props) {
  const { id } = await params;
  return <ItemView id={decodeURIComponent(id)} />;
}
