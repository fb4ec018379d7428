import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Work Graph", template: "%s · Work Graph" },
  description: "Coordination for fleets of agents and the humans who steer them",
};

// Rendered per request: the Content-Security-Policy nonce (proxy.ts) differs on every page view.
export const dynamic = "force-dynamic";

export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
