"use client";

import { useQuery } from "@tanstack/react-query";
import { useServerNow } from "./clock";
import { EndedLeaseTable, LeaseTable, secondsLeft } from "./lease-tables";
import { useTRPC } from "./trpc";
import { ApiError, Empty, Loading, Section } from "./ui";
import { useUrlState } from "./url-state";
import { useProjectId } from "./project";

const ACTIVE_LIMIT = 200;

export function LeasesView({ initialWorker }: { initialWorker: string }) {
  const trpc = useTRPC();
  const [worker, setWorker] = useUrlState("worker", initialWorker);
  const workerId = worker.trim() || undefined;
  const active = useQuery(trpc.leases.active.queryOptions({ projectId: useProjectId(), workerId, limit: ACTIVE_LIMIT }));
  const recent = useQuery(trpc.leases.recent.queryOptions({ workerId, limit: 50 }));
  // Workers seen in either list, for the filter's suggestions (unfiltered lists when no filter is set).
  const workers = [...new Set([...(active.data ?? []), ...(recent.data ?? [])].map((lease) => lease.workerId))].sort();
  const now = useServerNow();
  const expiring = (active.data ?? []).filter((lease) => secondsLeft(lease, now) < 60).length;

  return (
    <>
      <div className="page-head">
        <h1>Leases</h1>
        <form className="inline-field" role="search" onSubmit={(event) => event.preventDefault()}>
          <label htmlFor="worker-filter">Worker</label>
          <input id="worker-filter" type="search" list="known-workers" placeholder="all workers" value={worker} onChange={(e) => setWorker(e.target.value)} />
          <datalist id="known-workers">
            {workers.map((id) => (
              <option key={id} value={id} />
            ))}
          </datalist>
          {worker ? (
            <button type="button" className="button-quiet" onClick={() => setWorker("")}>
              Clear
            </button>
          ) : null}
        </form>
      </div>
      <Section
        title="Active leases"
        id="active"
        actions={expiring > 0 ? <span className="badge badge-warn">{expiring} expiring within a minute</span> : undefined}
      >
        <p className="hint">Soonest expiry first. Time left is counted on the database clock.</p>
        {active.error ? <ApiError error={active.error} /> : null}
        {!active.data ? (
          <Loading what="active leases" />
        ) : active.data.length === 0 ? (
          <Empty>{workerId ? <>No live leases held by <bdi>{workerId}</bdi>.</> : "No live leases."}</Empty>
        ) : (
          <LeaseTable leases={active.data} testId="active-leases" revocable />
        )}
        {active.data?.length === ACTIVE_LIMIT ? <p className="hint">Showing the {ACTIVE_LIMIT} soonest to expire; filter by worker to see others.</p> : null}
      </Section>
      <Section title="Recently ended" id="recent">
        {recent.error ? <ApiError error={recent.error} /> : null}
        {!recent.data ? (
          <Loading what="ended leases" />
        ) : recent.data.length === 0 ? (
          <Empty>No lease has ended yet.</Empty>
        ) : (
          <EndedLeaseTable leases={recent.data} testId="recent-leases" />
        )}
      </Section>
    </>
  );
}
