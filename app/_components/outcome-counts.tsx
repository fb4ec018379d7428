"use client";

import { useQuery } from "@tanstack/react-query";
import { LEASE_OUTCOMES } from "@work-graph/contract";
import { humanize } from "./format";
import { useTRPC } from "./trpc";
import { ApiError } from "./ui";

/** Overview: how leases ended in the last hour; an operator's revocations apart from expiries. */
export function OutcomeCounts() {
  const trpc = useTRPC();
  const counts = useQuery(trpc.dashboard.endedLastHour.queryOptions());
  if (counts.error) return <ApiError error={counts.error} />;
  return (
    <section className="outcome-counts" aria-labelledby="outcome-counts">
      <h2 id="outcome-counts" className="outcome-counts-title">Leases ended in the last hour</h2>
      <ul>
        {LEASE_OUTCOMES.map((outcome) => (
          <li key={outcome} className={`outcome-count outcome-${outcome}`} data-testid={`ended-${outcome}`}>
            <span className="outcome-count-n">{counts.data?.[outcome] ?? "–"}</span> {humanize(outcome)}
          </li>
        ))}
      </ul>
    </section>
  );
}
