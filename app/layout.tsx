import type { Metadata } from "next";
import type { ReactNode } from "react";

export const metadata: Metadata = { title: "Work Graph", description: "Coordination for fleets of agents and the humans who steer them" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
