"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { humanize } from "./format";
import { LeaseTable } from "./lease-tables";
import { OutcomeCounts } from "./outcome-counts";
import { useSummary } from "./shell";
import { useTRPC } from "./trpc";
import { STAGES } from "./types";
import { Age, ApiError, Empty, Loading, Section, StageBadge } from "./ui";
import { itemHref } from "@/server/domain/contract";

function StageCounts() {
  const summary = useSummary();
  if (summary.error) return <ApiError error={summary.error} />;
  const stages = summary.data?.stages;
  return (
    <ul className="stage-cards" aria-label="Work items per stage">
      {STAGES.map((stage) => {
        const count = stages?.[stage];
        const alert = stage === "needs_attention" && (count ?? 0) > 0;
        return (
          <li key={stage}>
            <Link href={`/items?stage=${stage}`} className={`stage-card stage-card-${stage} ${alert ? "stage-card-alert" : ""}`} data-testid={`stage-count-${stage}`}>
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

function NeedsAttention() {
  const trpc = useTRPC();
  const items = useQuery(trpc.workItems.list.queryOptions({ stage: "needs_attention", limit: 20 }));
  if (!items.data || items.data.items.length === 0) return null;
  return (
    <Section title="Items needing attention" id="needs-attention">
      <ul className="attention-items">
        {items.data.items.map((item) => (
          <li key={item.id} className="highlight-row">
            <StageBadge stage={item.stage} /> <Link href={itemHref(item.id)}>{item.title}</Link>{" "}
            <code className="id">{item.id}</code>
            {item.previousWorkerId ? <span className="muted"> · asked by {item.previousWorkerId}</span> : null}
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

function ReadyQueue() {
  const trpc = useTRPC();
  const [worker, setWorker] = useState("");
  const queue = useQuery(trpc.workItems.queue.queryOptions({ limit: 25, workerId: worker.trim() || undefined }));
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
        <table className="table responsive" data-testid="ready-queue">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Item</th>
              <th scope="col">Priority</th>
              <th scope="col">Age</th>
              <th scope="col">Previous worker</th>
            </tr>
          </thead>
          <tbody>
            {queue.data.map((item, index) => (
              <tr key={item.id} data-item-id={item.id}>
                <td data-label="#">{index + 1}</td>
                <td data-label="Item">
                  <span className="cell"><Link href={itemHref(item.id)}>{item.title}</Link> <code className="id">{item.id}</code></span>
                </td>
                <td data-label="Priority" className="num">{item.priority}</td>
                <td data-label="Age"><Age since={item.createdAt} suffix="" /></td>
                <td data-label="Previous worker">{item.previousWorkerId ?? <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

function ActiveLeases() {
  const trpc = useTRPC();
  const leases = useQuery(trpc.leases.active.queryOptions({ limit: 20 }));
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
      <NeedsAttention />
      <div className="two-col">
        <ReadyQueue />
        <ActiveLeases />
      </div>
    </>
  );
}
