"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { humanize } from "./format";
import { LeaseTable } from "./lease-tables";
import { OutcomeCounts } from "./outcome-counts";
import { useSummary } from "./shell";
import { DataTable, type Column } from "./data-table";
import { useTRPC } from "./trpc";
import { STAGES, type Outputs } from "./types";
import { Age, ApiError, Capabilities, Empty, ItemLink, Loading, Section, StageBadge, WorkerId } from "./ui";
import { useProjectHref, useProjectId } from "./project";
import { UNROUTABLE_LIMIT } from "./unroutable-view";

function StageCounts() {
  const summary = useSummary();
  const projectHref = useProjectHref();
  if (summary.error) return <ApiError error={summary.error} />;
  const stages = summary.data?.stages;
  return (
    <ul className="stage-cards" aria-label="Work items per stage">
      {STAGES.map((stage) => {
        const count = stages?.[stage];
        const alert = stage === "needs_attention" && (count ?? 0) > 0;
        return (
          <li key={stage}>
            <Link href={projectHref(`/items?stage=${stage}`)} className={`stage-card stage-card-${stage} ${alert ? "stage-card-alert" : ""}`} data-testid={`stage-count-${stage}`}>
              <span className="stage-card-count">{count ?? "–"}</span>
              <span className="stage-card-label">{humanize(stage)}</span>
            </Link>
          </li>
        );
      })}
    </ul>
  );
}

function AttentionCallout() {
  const summary = useSummary();
  const open = summary.data?.openAttention;
  if (open === undefined) return null;
  return (
    <p className={`callout ${open > 0 ? "callout-alert" : ""}`} data-testid="attention-callout">
      {open === 0 ? (
        <>No open attention requests. </>
      ) : (
        <>
          <strong>{open}</strong> open attention {open === 1 ? "request is" : "requests are"} waiting for a person.{" "}
        </>
      )}
      <Link href="/attention">Open the attention inbox</Link>
    </p>
  );
}

/** Ready items no agent can take (dashboard.summary.unroutable), and the capabilities they lack. */
function UnroutableCallout() {
  const trpc = useTRPC();
  const summary = useSummary();
  const projectId = useProjectId();
  const count = summary.data?.unroutable ?? 0;
  const unroutable = useQuery({ ...trpc.dashboard.unroutable.queryOptions({ projectId, limit: UNROUTABLE_LIMIT }), enabled: count > 0 });
  if (count === 0) return null;
  const missing = [...new Set(unroutable.data?.items.flatMap((entry) => entry.missing) ?? [])].sort();
  return (
    <p className="callout callout-alert" data-testid="unroutable-callout">
      <strong>{count}</strong> ready {count === 1 ? "item" : "items"}: no agent can take {count === 1 ? "it" : "these"}
      {unroutable.data ? (
        <>
          : {count === 1 ? "it needs" : "they need"} <Capabilities list={missing} />
        </>
      ) : null}
      .{" "}
      <Link href="/unroutable">Show the unroutable items</Link>
    </p>
  );
}

function NeedsAttention() {
  const trpc = useTRPC();
  const items = useQuery(trpc.workItems.list.queryOptions({ projectId: useProjectId(), stage: "needs_attention", limit: 20 }));
  if (!items.data || items.data.items.length === 0) return null;
  return (
    <Section title="Items needing attention" id="needs-attention">
      <ul className="attention-items">
        {items.data.items.map((item) => (
          <li key={item.id} className="highlight-row">
            <StageBadge stage={item.stage} /> <ItemLink id={item.id} title={item.title} />
            {item.previousWorkerId ? <span className="muted"> · asked by <WorkerId id={item.previousWorkerId} /></span> : null}
          </li>
        ))}
      </ul>
      {items.data.nextCursor ? (
        <p>
          <Link href="/items?stage=needs_attention">All items needing attention</Link>
        </p>
      ) : null}
    </Section>
  );
}

type QueuedItem = Outputs["workItems"]["queue"][number];

const queueColumns: Column<QueuedItem>[] = [
  { header: "#", kind: "token", cell: (_item, index) => index + 1 },
  { header: "Item", kind: "text", cell: (item) => <span className="cell"><ItemLink id={item.id} title={item.title} /></span> },
  { header: "Priority", kind: "token", numeric: true, cell: (item) => item.priority },
  { header: "Requires", kind: "token", cell: (item) => <Capabilities list={item.requires} /> },
  { header: "Age", kind: "token", cell: (item) => <Age since={item.createdAt} suffix="" /> },
  { header: "Previous worker", kind: "token", cell: (item) => (item.previousWorkerId ? <WorkerId id={item.previousWorkerId} /> : <span className="muted">—</span>) },
];

function ReadyQueue() {
  const trpc = useTRPC();
  const [worker, setWorker] = useState("");
  const queue = useQuery(trpc.workItems.queue.queryOptions({ projectId: useProjectId(), limit: 25, workerId: worker.trim() || undefined }));
  return (
    <Section
      title="Ready queue"
      id="ready-queue"
      actions={
        <div className="inline-field">
          <label htmlFor="queue-worker">As seen by worker</label>
          <input id="queue-worker" type="search" placeholder="any worker" value={worker} onChange={(e) => setWorker(e.target.value)} />
        </div>
      }
    >
      <p className="hint">The exact order the next claim takes items{worker.trim() ? ` for ${worker.trim()} (continuity included)` : ""}.</p>
      {queue.error ? <ApiError error={queue.error} /> : null}
      {!queue.data ? (
        <Loading what="the queue" />
      ) : queue.data.length === 0 ? (
        <Empty>Nothing is ready to claim.</Empty>
      ) : (
        <DataTable columns={queueColumns} rows={queue.data} rowKey={(item) => item.id} rowAttributes={(item) => ({ "data-item-id": item.id })} testId="ready-queue" />
      )}
    </Section>
  );
}

function ActiveLeases() {
  const trpc = useTRPC();
  const leases = useQuery(trpc.leases.active.queryOptions({ projectId: useProjectId(), limit: 20 }));
  return (
    <Section title="Active leases" id="active-leases" actions={<Link href="/leases">All leases</Link>}>
      {leases.error ? <ApiError error={leases.error} /> : null}
      {!leases.data ? <Loading what="leases" /> : leases.data.length === 0 ? <Empty>No live leases.</Empty> : <LeaseTable leases={leases.data} testId="overview-active-leases" />}
    </Section>
  );
}

export function Overview() {
  return (
    <>
      <div className="page-head">
        <h1>Overview</h1>
      </div>
      <StageCounts />
      <OutcomeCounts />
      <AttentionCallout />
      <UnroutableCallout />
      <NeedsAttention />
      <div className="two-col">
        <ReadyQueue />
        <ActiveLeases />
      </div>
    </>
  );
}
