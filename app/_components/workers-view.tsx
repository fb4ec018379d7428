"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useId, useState, type FormEvent } from "react";
import { useServerNow } from "./clock";
import { useTRPC } from "./trpc";
import type { Outputs } from "./types";
import { Age, ApiError, Empty, Loading, Section } from "./ui";

type Worker = Outputs["workers"]["list"][number];

/** Not seen for this long (on the database clock): shown as stale. A worker renewing a 15-minute lease is seen every 5. */
const STALE_AFTER_MS = 10 * 60_000;

function LastSeen({ worker }: { worker: Worker }) {
  const now = useServerNow();
  if (!worker.lastSeenAt) return <span className="badge badge-stale" data-stale="true">never seen</span>;
  const stale = now !== null && now - Date.parse(worker.lastSeenAt) > STALE_AFTER_MS;
  return (
    <span className="cell" data-stale={stale ? "true" : "false"}>
      <Age since={worker.lastSeenAt} />
      {stale ? <span className="badge badge-stale">stale</span> : null}
    </span>
  );
}

function DrainControl({ worker }: { worker: Worker }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const reasonId = useId();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const done = () => {
    setOpen(false);
    setReason("");
    return queryClient.invalidateQueries();
  };
  const drain = useMutation(trpc.workers.drain.mutationOptions({ onSuccess: done }));
  const undrain = useMutation(trpc.workers.undrain.mutationOptions({ onSuccess: done }));
  if (worker.drained) {
    return (
      <>
        <button type="button" className="button-small" disabled={undrain.isPending} onClick={() => undrain.mutate({ workerId: worker.workerId })}
          aria-label={`Undrain ${worker.workerId}`}>
          Undrain
        </button>
        <ApiError error={undrain.error} />
      </>
    );
  }
  if (!open) {
    return (
      <button type="button" className="button-small button-danger" onClick={() => setOpen(true)} aria-label={`Drain ${worker.workerId}`}>
        Drain…
      </button>
    );
  }
  return (
    <form
      className="revoke-form"
      data-testid="drain-form"
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        drain.mutate({ workerId: worker.workerId, reason: reason.trim() || undefined });
      }}
    >
      <label htmlFor={reasonId}>Reason (optional; the worker is told when its next claim is refused)</label>
      <input id={reasonId} value={reason} onChange={(e) => setReason(e.target.value)} autoFocus />
      <div className="row">
        <button type="submit" className="button-danger button-small" disabled={drain.isPending}>
          Drain {worker.workerId}
        </button>
        <button type="button" className="button-quiet button-small" onClick={() => setOpen(false)}>
          Keep it claiming
        </button>
      </div>
      <ApiError error={drain.error} />
    </form>
  );
}

export function WorkersView() {
  const trpc = useTRPC();
  const workers = useQuery(trpc.workers.list.queryOptions({}));
  return (
    <>
      <div className="page-head">
        <h1>Workers</h1>
      </div>
      <Section title="Every worker seen" id="workers">
        <p className="hint">
          Most recently seen first. A drained worker finishes the leases it holds and claims nothing new. Not seen for 10 minutes: stale.
        </p>
        {workers.error ? <ApiError error={workers.error} /> : null}
        {!workers.data ? (
          <Loading what="workers" />
        ) : workers.data.length === 0 ? (
          <Empty>No worker has been seen yet.</Empty>
        ) : (
          <table className="table responsive" data-testid="workers">
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">Live leases</th>
                <th scope="col">Last seen</th>
                <th scope="col">Last hour: claimed</th>
                <th scope="col">released</th>
                <th scope="col">expired</th>
                <th scope="col">revoked</th>
                <th scope="col">State</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {workers.data.map((worker) => (
                <tr key={worker.workerId} data-worker-id={worker.workerId} data-drained={worker.drained ? "true" : "false"}>
                  <td data-label="Worker" className="worker">
                    <Link href={`/leases?worker=${encodeURIComponent(worker.workerId)}`}>{worker.workerId}</Link>
                  </td>
                  <td data-label="Live leases" className="num live-leases">{worker.liveLeases}</td>
                  <td data-label="Last seen"><LastSeen worker={worker} /></td>
                  <td data-label="Claimed (last hour)" className="num">{worker.lastHour.claimed}</td>
                  <td data-label="Released" className="num">{worker.lastHour.released}</td>
                  <td data-label="Expired" className="num">{worker.lastHour.expired}</td>
                  <td data-label="Revoked" className="num">{worker.lastHour.revoked}</td>
                  <td data-label="State" className="worker-state">
                    {worker.drained ? (
                      <>
                        <span className="badge badge-drained">drained</span>
                        {worker.drainReason ? <span className="muted small"> {worker.drainReason}</span> : null}
                      </>
                    ) : (
                      <span className="badge stage-ready">claiming</span>
                    )}
                  </td>
                  <td data-label="Actions"><DrainControl worker={worker} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </>
  );
}
