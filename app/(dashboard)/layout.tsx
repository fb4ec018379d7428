import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { ProjectProvider } from "@/app/_components/project";
import { Shell } from "@/app/_components/shell";
import { Providers } from "@/app/_components/trpc";
import { sessionCaller } from "@/app/_lib/session";

export const dynamic = "force-dynamic";

/** Every dashboard page needs a live operator or admin session; otherwise: the login page. */
export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const caller = await sessionCaller();
  if (!caller) redirect("/login");
  return (
    <ProjectProvider scope={caller.projects}>
      <Providers>
        <Shell actor={caller.actor} role={caller.role} personName={caller.person?.name ?? null}>
          {children}
        </Shell>
      </Providers>
    </ProjectProvider>
  );
}
