"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useId, useState, type FormEvent } from "react";
import { useServerNow } from "./clock";
import { useTRPC } from "./trpc";
import type { Outputs } from "./types";
import { DataTable, type Column } from "./data-table";
import { Age, ApiError, Capabilities, Empty, Loading, Section, WorkerId, Who } from "./ui";

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

const workerColumns: Column<Worker>[] = [
  {
    header: "Worker",
    kind: "token",
    cell: (worker) => <Link href={`/leases?worker=${encodeURIComponent(worker.workerId)}`}><WorkerId id={worker.workerId} /></Link>,
  },
  { header: "Capabilities", kind: "token", className: "worker-capabilities", cell: (worker) => <Capabilities list={worker.capabilities} none="none" /> },
  { header: "Live leases", kind: "token", numeric: true, className: "live-leases", cell: (worker) => worker.liveLeases },
  { header: "Last seen", kind: "token", cell: (worker) => <LastSeen worker={worker} /> },
  { header: "Last hour: claimed", label: "Claimed (last hour)", kind: "token", numeric: true, cell: (worker) => worker.lastHour.claimed },
  { header: "released", label: "Released", kind: "token", numeric: true, cell: (worker) => worker.lastHour.released },
  { header: "expired", label: "Expired", kind: "token", numeric: true, cell: (worker) => worker.lastHour.expired },
  { header: "revoked", label: "Revoked", kind: "token", numeric: true, cell: (worker) => worker.lastHour.revoked },
  {
    header: "State",
    kind: "text",
    className: "worker-state",
    cell: (worker) =>
      worker.drained ? (
        <>
          <span className="badge badge-drained">drained</span>
          {worker.drainedBy ? (
            <span className="muted small">
              {" "}
              by <Who actor={worker.drainedBy} name={worker.drainedByName} />
            </span>
          ) : null}
          {worker.drainReason ? <span className="muted small"> {worker.drainReason}</span> : null}
        </>
      ) : (
        <span className="badge stage-ready">claiming</span>
      ),
  },
  { header: "Actions", hideHeader: true, kind: "text", cell: (worker) => <DrainControl worker={worker} /> },
];

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
          Most recently seen first. Capabilities: what the worker's agent tokens let it claim. A drained worker finishes the leases it holds and claims nothing new. Not seen for 10 minutes: stale.
        </p>
        {workers.error ? <ApiError error={workers.error} /> : null}
        {!workers.data ? (
          <Loading what="workers" />
        ) : workers.data.length === 0 ? (
          <Empty>No worker has been seen yet.</Empty>
        ) : (
          <DataTable
            columns={workerColumns}
            rows={workers.data}
            rowKey={(worker) => worker.workerId}
            rowAttributes={(worker) => ({ "data-worker-id": worker.workerId, "data-drained": worker.drained ? "true" : "false" })}
            testId="workers"
          />
        )}
      </Section>
    </>
  );
}
