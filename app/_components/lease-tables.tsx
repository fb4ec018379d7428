"use client";

import Link from "next/link";
import { duration } from "./format";
import { RevokeLease } from "./revoke-lease";
import type { ActiveLease, EndedLease } from "./types";
import { useServerNow } from "./clock";
import { Age, Countdown, OutcomeBadge, Time } from "./ui";
import { itemHref } from "@/server/domain/contract";

/** Seconds left, ticking in the browser (database clock, clock.ts); the server's figure until the clock is known. */
export const secondsLeft = (lease: ActiveLease, now: number | null) => (now === null ? lease.secondsLeft : (Date.parse(lease.expiresAt) - now) / 1000);

/** Live leases, in the order given (soonest expiry first from leases.active); `revocable` adds a Revoke action per lease. */
export function LeaseTable({ leases, testId, revocable = false }: { leases: ActiveLease[]; testId: string; revocable?: boolean }) {
  const now = useServerNow();
  return (
    <table className="table responsive" data-testid={testId}>
      <thead>
        <tr>
          <th scope="col">Worker</th>
          <th scope="col">Item</th>
          <th scope="col">Epoch</th>
          <th scope="col">Time left</th>
          <th scope="col">Last renewal</th>
          {revocable ? <th scope="col"><span className="visually-hidden">Actions</span></th> : null}
        </tr>
      </thead>
      <tbody>
        {leases.map((lease) => (
          <tr key={lease.id} data-lease-id={lease.id} data-item-id={lease.workItemId} className={secondsLeft(lease, now) < 60 ? "row-warn" : undefined}>
            <td data-label="Worker" className="worker">{lease.workerId}</td>
            <td data-label="Item">
              <span className="cell"><Link href={itemHref(lease.workItemId)}>{lease.workItemTitle}</Link> <code className="id">{lease.workItemId}</code></span>
            </td>
            <td data-label="Epoch" className="num epoch">{lease.epoch}</td>
            <td data-label="Time left"><Countdown expiresAt={lease.expiresAt} /></td>
            <td data-label="Last renewal">{lease.renewedAt ? <Age since={lease.renewedAt} /> : <span className="muted">not renewed</span>}</td>
            {revocable ? <td data-label="Actions"><RevokeLease lease={lease} /></td> : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Ended leases, most recently ended first. */
export function EndedLeaseTable({ leases, testId }: { leases: EndedLease[]; testId: string }) {
  return (
    <table className="table responsive" data-testid={testId}>
      <thead>
        <tr>
          <th scope="col">Worker</th>
          <th scope="col">Item</th>
          <th scope="col">Epoch</th>
          <th scope="col">Outcome</th>
          <th scope="col">Held</th>
          <th scope="col">Ended</th>
        </tr>
      </thead>
      <tbody>
        {leases.map((lease) => (
          <tr key={lease.id} data-lease-id={lease.id} data-item-id={lease.workItemId}>
            <td data-label="Worker" className="worker">{lease.workerId}</td>
            <td data-label="Item">
              <span className="cell"><Link href={itemHref(lease.workItemId)}>{lease.workItemTitle}</Link> <code className="id">{lease.workItemId}</code></span>
            </td>
            <td data-label="Epoch" className="num epoch">{lease.epoch}</td>
            <td data-label="Outcome"><OutcomeBadge outcome={lease.outcome} /></td>
            <td data-label="Held">{lease.endedAt ? duration(Date.parse(lease.endedAt) - Date.parse(lease.acquiredAt)) : "—"}</td>
            <td data-label="Ended"><Time iso={lease.endedAt} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
