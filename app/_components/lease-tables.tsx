"use client";

import { DataTable, type Column } from "./data-table";
import { duration } from "./format";
import { RevokeLease } from "./revoke-lease";
import type { ActiveLease, EndedLease } from "./types";
import { useServerNow } from "./clock";
import { Age, Countdown, ItemLink, OutcomeBadge, Time, WorkerId } from "./ui";

/** Seconds left, ticking in the browser (database clock, clock.ts); the server's figure until the clock is known. */
export const secondsLeft = (lease: ActiveLease, now: number | null) => (now === null ? lease.secondsLeft : (Date.parse(lease.expiresAt) - now) / 1000);

/** The columns both lease tables start with. */
function leaseColumns<Lease extends ActiveLease | EndedLease>(): Column<Lease>[] {
  return [
    { header: "Worker", kind: "token", cell: (lease) => <WorkerId id={lease.workerId} /> },
    { header: "Item", kind: "text", cell: (lease) => <span className="cell"><ItemLink id={lease.workItemId} title={lease.workItemTitle} /></span> },
    { header: "Epoch", kind: "token", numeric: true, className: "epoch", cell: (lease) => lease.epoch },
  ];
}

const leaseRow = (lease: ActiveLease | EndedLease) => ({ "data-lease-id": lease.id, "data-item-id": lease.workItemId });

/** Live leases, in the order given (soonest expiry first from leases.active); `revocable` adds a Revoke action per lease. */
export function LeaseTable({ leases, testId, revocable = false }: { leases: ActiveLease[]; testId: string; revocable?: boolean }) {
  const now = useServerNow();
  const columns: Column<ActiveLease>[] = [
    ...leaseColumns<ActiveLease>(),
    { header: "Time left", kind: "token", cell: (lease) => <Countdown expiresAt={lease.expiresAt} /> },
    { header: "Last renewal", kind: "token", cell: (lease) => (lease.renewedAt ? <Age since={lease.renewedAt} /> : <span className="muted">not renewed</span>) },
  ];
  if (revocable) columns.push({ header: "Actions", hideHeader: true, kind: "text", cell: (lease) => <RevokeLease lease={lease} /> });
  return (
    <DataTable
      columns={columns}
      rows={leases}
      rowKey={(lease) => lease.id}
      rowAttributes={(lease) => ({ ...leaseRow(lease), className: secondsLeft(lease, now) < 60 ? "row-warn" : undefined })}
      testId={testId}
    />
  );
}

const endedColumns: Column<EndedLease>[] = [
  ...leaseColumns<EndedLease>(),
  { header: "Outcome", kind: "token", cell: (lease) => <OutcomeBadge outcome={lease.outcome} /> },
  { header: "Held", kind: "token", cell: (lease) => (lease.endedAt ? duration(Date.parse(lease.endedAt) - Date.parse(lease.acquiredAt)) : "—") },
  { header: "Ended", kind: "token", cell: (lease) => <Time iso={lease.endedAt} /> },
];

/** Ended leases, most recently ended first. */
export function EndedLeaseTable({ leases, testId }: { leases: EndedLease[]; testId: string }) {
  return <DataTable columns={endedColumns} rows={leases} rowKey={(lease) => lease.id} rowAttributes={leaseRow} testId={testId} />;
}
