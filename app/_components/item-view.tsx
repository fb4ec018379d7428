"use client";

import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState, type FormEvent, type ReactNode } from "react";
import { duration } from "./format";
import { NeighbourhoodGraph } from "./graph";
import { RevokeLease } from "./revoke-lease";
import { DataTable, type Column } from "./data-table";
import { describeError, useTRPC, useTRPCClient } from "./trpc";
import { isTerminalStage, type Lease, type Neighbourhood, type Outputs, type WaitingOn, type WorkItem } from "./types";
import { Age, ApiError, Capabilities, Countdown, Empty, ItemIdLink, ItemLink, Loading, OutcomeBadge, Section, StageBadge, StartsIn, Time, Token, WorkerId, Who } from "./ui";

type Attention = Outputs["attention"]["list"]["items"][number];

function ItemRef({ item }: { item: { id: string; title: string; stage: string } }) {
  return (
    <>
      <ItemLink id={item.id} title={item.title} /> <StageBadge stage={item.stage} />
    </>
  );
}

type Line = { key: string; node: ReactNode };

/** The server's explanation of one condition that keeps the item from being ready (dashboard.neighbourhood's waitingOn), as list lines. */
function waitingOnLines(reason: WaitingOn): Line[] {
  switch (reason.stage) {
    case "needs_attention":
      if (reason.requests.length === 0) return [{ key: "attention", node: <>Waiting for an answer to a blocking attention request. <Link href="/attention">Answer it in the inbox</Link></> }];
      return reason.requests.map((request) => ({
        key: `a-${request.id}`,
        node: (
          <>
            Waiting for an answer to <q>{request.question}</q> (asked by <WorkerId id={request.workerId} />,{" "}
            <Age since={request.createdAt} />). <Link href="/attention">Answer it in the inbox</Link>
          </>
        ),
      }));
    case "leased":
      return [{
        key: "lease",
        node: reason.lease ? (
          <>
            Leased by <WorkerId id={reason.lease.workerId} /> (epoch {reason.lease.epoch}); time left <Countdown expiresAt={reason.lease.expiresAt} />
          </>
        ) : (
          <>Leased.</>
        ),
      }];
    case "waiting_on_children":
      return [{
        key: "children",
        node: (
          <>
            Waiting on {reason.openChildCount} open {reason.openChildCount === 1 ? "child" : "children"}
            {reason.children.length > 0 ? ":" : "."}
            {reason.children.length > 0 ? (
              <ul>
                {reason.children.map((child) => (
                  <li key={child.id}>
                    <ItemRef item={child} />
                  </li>
                ))}
              </ul>
            ) : null}
          </>
        ),
      }];
    case "blocked": {
      const lines: Line[] = [
        ...reason.dependencies.map((dependency) => ({ key: `d-${dependency.id}`, node: <>Blocked by dependency <ItemRef item={dependency} /></> })),
        ...reason.ancestorBlockers.map((blocker) => ({
          key: `ad-${blocker.ancestorId}-${blocker.id}`,
          node: (
            <>
              Blocked through ancestor <ItemIdLink id={blocker.ancestorId} />, which depends on <ItemRef item={blocker} />
            </>
          ),
        })),
      ];
      return lines.length > 0 ? lines : [{ key: "blocked", node: <>Blocked by an open dependency.</> }];
    }
    case "scheduled":
      return [{
        key: "scheduled",
        node: (
          <>
            Not claimable before <Time iso={reason.notBefore} /> (<StartsIn at={reason.notBefore} />).
          </>
        ),
      }];
  }
}

/**
 * Why the item is in its stage. Both come from the server: the stage (STAGE_SQL) and, for an
 * item that is not ready, every condition that holds, the deciding one first (waitingOn, from
 * the same rule in server/domain/readiness.ts). Nothing here re-derives readiness.
 */
function StageReason({ item, around, cancellation }: { item: WorkItem; around?: Neighbourhood; cancellation?: ItemEvent }) {
  let summary: ReactNode;
  switch (item.stage) {
    case "ready":
      summary =
        item.requires.length > 0 ? (
          <>
            Ready: the next claim of an agent with <Capabilities list={item.requires} /> may take it.
          </>
        ) : (
          "Ready: the next claim may take it."
        );
      break;
    case "scheduled":
      summary = item.notBefore ? (
        <>
          Scheduled: not claimable before <Time iso={item.notBefore} /> (<StartsIn at={item.notBefore} />).
        </>
      ) : (
        "Scheduled."
      );
      break;
    case "released":
      summary = "Released: the work is done.";
      break;
    case "cancelled":
      summary = cancellation ? (
        <>
          Cancelled by <Who actor={cancellation.actor} name={cancellation.actorName} /> <Age since={cancellation.createdAt} />: no one will
          work on it.
        </>
      ) : (
        "Cancelled: no one will work on it."
      );
      break;
    default:
      summary = "Not ready to claim:";
  }
  // A scheduled item's summary already names its time gate.
  const reasons = (around?.waitingOn ?? []).filter((reason) => !(reason.stage === "scheduled" && item.stage === "scheduled"));
  const lines = reasons.flatMap((reason) => waitingOnLines(reason).map((line) => ({ ...line, stage: reason.stage })));
  return (
    <div className={`stage-reason stage-reason-${item.stage}`} data-testid="stage-reason">
      <p>
        <StageBadge stage={item.stage} /> {summary}
      </p>
      {lines.length > 0 ? (
        <ul className="reasons">
          {lines.map((line) => (
            <li key={line.key} data-waiting-on={line.stage}>
              {line.node}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function useInvalidateAll() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries();
}

function PriorityForm({ item }: { item: WorkItem }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const [value, setValue] = useState<string | null>(null);
  const mutation = useMutation(trpc.workItems.setPriority.mutationOptions({ onSuccess: () => { setValue(null); return invalidate(); } }));
  const shown = value ?? String(item.priority);
  return (
    <form
      className="action-form"
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        mutation.mutate({ id: item.id, priority: Math.trunc(Number(shown)) });
      }}
    >
      <label htmlFor="priority">Priority</label>
      <div className="row">
        <input id="priority" type="number" step={1} value={shown} onChange={(e) => setValue(e.target.value)} />
        <button type="submit" disabled={mutation.isPending || shown === "" || Number(shown) === item.priority}>
          Save priority
        </button>
      </div>
      <ApiError error={mutation.error} />
    </form>
  );
}

/** An ISO time as a `datetime-local` value in the browser's time zone ("2026-12-04T17:05"). */
function localInputValue(iso: string | null): string {
  if (!iso) return "";
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** workItems.update's queue policy: what a worker must be able to do, the concurrency key and the time gate. Only changed fields are sent. */
function QueuePolicyForm({ item }: { item: WorkItem }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const initial = { requires: item.requires.join(", "), concurrencyKey: item.concurrencyKey ?? "", notBefore: localInputValue(item.notBefore) };
  const [edited, setEdited] = useState<Partial<typeof initial>>({});
  const fields = { ...initial, ...edited };
  const mutation = useMutation(trpc.workItems.update.mutationOptions({ onSuccess: () => { setEdited({}); return invalidate(); } }));
  const set = (name: keyof typeof initial) => (event: { target: { value: string } }) => setEdited((e) => ({ ...e, [name]: event.target.value }));
  const changed = (name: keyof typeof initial) => fields[name] !== initial[name];
  return (
    <form
      className="action-form"
      aria-label="Queue policy"
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        mutation.mutate({
          id: item.id,
          requires: changed("requires") ? fields.requires.split(/[\s,]+/).filter(Boolean) : undefined,
          concurrencyKey: changed("concurrencyKey") ? fields.concurrencyKey.trim() || null : undefined,
          notBefore: changed("notBefore") ? (fields.notBefore ? new Date(fields.notBefore).toISOString() : null) : undefined,
        });
      }}
    >
      <label htmlFor="policy-requires">Requires <span className="muted">(capabilities, comma separated)</span></label>
      <input id="policy-requires" value={fields.requires} onChange={set("requires")} spellCheck={false} />
      <label htmlFor="policy-key">Concurrency key <span className="muted">(empty: none)</span></label>
      <input id="policy-key" value={fields.concurrencyKey} onChange={set("concurrencyKey")} spellCheck={false} />
      <label htmlFor="policy-not-before">Not before <span className="muted">(empty: claimable now)</span></label>
      <input id="policy-not-before" type="datetime-local" value={fields.notBefore} onChange={set("notBefore")} />
      <div className="row">
        <button type="submit" disabled={mutation.isPending || !(["requires", "concurrencyKey", "notBefore"] as const).some(changed)}>
          Save queue policy
        </button>
      </div>
      {item.currentLease ? <p className="hint">The live lease keeps running: a change applies to the next claim.</p> : null}
      <ApiError error={mutation.error} />
    </form>
  );
}

function AddDependencyForm({ item }: { item: WorkItem }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const [target, setTarget] = useState("");
  const mutation = useMutation(trpc.workItems.addDependency.mutationOptions({ onSuccess: () => { setTarget(""); return invalidate(); } }));
  return (
    <form
      className="action-form"
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        mutation.mutate({ workItemId: item.id, dependsOnId: target.trim() });
      }}
    >
      <label htmlFor="add-dependency">Add a dependency (item id this one waits for)</label>
      <div className="row">
        <input id="add-dependency" value={target} onChange={(e) => setTarget(e.target.value)} spellCheck={false} />
        <button type="submit" disabled={mutation.isPending || !target.trim()}>
          Add dependency
        </button>
      </div>
      <ApiError error={mutation.error} />
    </form>
  );
}

function RemoveDependencyButton({ item, dependsOnId }: { item: WorkItem; dependsOnId: string }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const mutation = useMutation(trpc.workItems.removeDependency.mutationOptions({ onSuccess: () => invalidate() }));
  return (
    <>
      <button
        type="button"
        className="button-small"
        aria-label={`Remove dependency on ${dependsOnId}`}
        disabled={mutation.isPending}
        onClick={() => mutation.mutate({ workItemId: item.id, dependsOnId })}
      >
        Remove
      </button>
      {mutation.error ? <ApiError error={mutation.error} /> : null}
    </>
  );
}

function CancelForm({ item }: { item: WorkItem }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const [reason, setReason] = useState("");
  const mutation = useMutation(trpc.workItems.cancel.mutationOptions({ onSuccess: () => invalidate() }));
  const leased = item.currentLease !== null;
  return (
    <form
      className="action-form danger-zone"
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        mutation.mutate({ id: item.id, reason });
      }}
    >
      <label htmlFor="cancel-reason">Cancel this item (reason)</label>
      <textarea id="cancel-reason" rows={2} value={reason} onChange={(e) => setReason(e.target.value)} />
      {leased ? (
        <p className="hint">
          Leased by <bdi>{item.currentLease?.workerId}</bdi>: a live lease is never pre-empted, so cancelling will be refused until it ends.
        </p>
      ) : null}
      <div className="row">
        <button type="submit" className="button-danger" disabled={mutation.isPending || !reason.trim()}>
          Cancel item
        </button>
      </div>
      <ApiError error={mutation.error} />
    </form>
  );
}

function Relations({ item, around }: { item: WorkItem; around?: Neighbourhood }) {
  const open = !isTerminalStage(item.stage);
  return (
    <div className="relations">
      <div>
        <h3>Depends on</h3>
        {item.dependsOn.length === 0 ? (
          <p className="muted">Nothing.</p>
        ) : (
          <ul className="plain" data-testid="dependencies">
            {(around?.dependencies ?? item.dependsOn.map((id) => ({ id, title: id, stage: "" }))).map((dep) => (
              <li key={dep.id}>
                {dep.stage ? <ItemRef item={dep} /> : <ItemIdLink id={dep.id} />}{" "}
                {open ? <RemoveDependencyButton item={item} dependsOnId={dep.id} /> : null}
              </li>
            ))}
          </ul>
        )}
      </div>
      <div>
        <h3>Depended on by</h3>
        {!around ? (
          <Loading what="dependents" />
        ) : around.dependents.length === 0 ? (
          <p className="muted">Nothing.</p>
        ) : (
          <ul className="plain" data-testid="dependents">
            {around.dependents.map((dep) => (
              <li key={dep.id}>
                <ItemRef item={dep} />
              </li>
            ))}
            {around.dependentCount > around.dependents.length ? (
              <li className="muted">and {around.dependentCount - around.dependents.length} more</li>
            ) : null}
          </ul>
        )}
      </div>
      <div>
        <h3>Parent</h3>
        {around?.ancestors[0] ? <ItemRef item={around.ancestors[0]} /> : item.parentId ? <ItemIdLink id={item.parentId} /> : <p className="muted">None (a root item).</p>}
      </div>
      <div>
        <h3>Children {around && around.childCount > 0 ? <span className="muted">({around.childCount})</span> : null}</h3>
        {!around ? (
          <Loading what="children" />
        ) : around.children.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <ul className="plain" data-testid="children">
            {around.children.map((child) => (
              <li key={child.id}>
                <ItemRef item={child} />
              </li>
            ))}
            {around.childCount > around.children.length ? (
              <li className="muted">and {around.childCount - around.children.length} more</li>
            ) : null}
          </ul>
        )}
      </div>
    </div>
  );
}

type ItemEvent = Outputs["events"]["list"]["items"][number];

function LeaseTimeline({ leases, attention, events }: { leases: Lease[]; attention: Attention[]; events: ItemEvent[] }) {
  if (leases.length === 0) return <Empty>Never claimed.</Empty>;
  return (
    <ol className="timeline" data-testid="lease-history">
      {[...leases].reverse().map((lease) => {
        const asked = attention.filter((a) => a.leaseId === lease.id);
        const revocation = lease.outcome === "revoked" ? events.find((e) => e.type === "lease.ended" && e.leaseId === lease.id) : undefined;
        return (
          <li key={lease.id} className={`timeline-entry tl-${lease.outcome ?? "live"}`} data-epoch={lease.epoch} data-outcome={lease.outcome ?? "live"}>
            <div className="timeline-head">
              <span className="epoch-chip">epoch {lease.epoch}</span> <WorkerId id={lease.workerId} />{" "}
              <OutcomeBadge outcome={lease.outcome} />
            </div>
            <p className="timeline-times">
              acquired <Time iso={lease.acquiredAt} />
              {lease.endedAt ? (
                <>
                  {" "}→ ended <Time iso={lease.endedAt} /> · held {duration(Date.parse(lease.endedAt) - Date.parse(lease.acquiredAt))}
                </>
              ) : (
                <>
                  {" "}· time left <Countdown expiresAt={lease.expiresAt} />
                </>
              )}
              {lease.renewedAt ? (
                <>
                  {" "}· last renewed <Time iso={lease.renewedAt} />
                </>
              ) : null}
            </p>
            {revocation ? (
              <p className="timeline-revoked" data-testid="revocation">
                <span className="label">Revoked by</span> <Who actor={revocation.actor} name={revocation.actorName} />: {String(revocation.data.reason ?? "")}
              </p>
            ) : null}
            {asked.map((request) => (
              <div key={request.id} className="timeline-attention">
                <p>
                  <span className="label">Asked</span> <bdi>{request.question}</bdi>
                </p>
                <p>
                  <span className="label">Answer</span>{" "}
                  {request.resolution ? <span className="resolution-text">{request.resolution}</span> : <span className="muted">not answered yet</span>}
                  {request.resolvedBy ? <span className="muted"> — <Who actor={request.resolvedBy} name={request.resolvedByName} /></span> : null}
                </p>
              </div>
            ))}
          </li>
        );
      })}
    </ol>
  );
}

function AttentionRequests({ attention }: { attention: Attention[] }) {
  if (attention.length === 0) return <Empty>No attention requests.</Empty>;
  return (
    <ul className="plain cards" data-testid="item-attention">
      {attention.map((request) => (
        <li key={request.id} className={`card ${request.status === "open" ? "card-open" : ""}`}>
          <p className="question-small">{request.question}</p>
          <p className="muted small">
            <span className="badge kind">{request.kind}</span> {request.blocking ? "blocking" : "not blocking"} · asked by{" "}
            <WorkerId id={request.workerId} /> <Age since={request.createdAt} /> · {request.status}
          </p>
          {request.context ? <p className="context">{request.context}</p> : null}
          {request.options.length > 0 ? <p className="small">Options: {request.options.map((option, index) => <bdi key={index} className="option">{option}</bdi>)}</p> : null}
          {request.status === "resolved" ? (
            <p className="resolution">
              <span className="label">Answer</span> <bdi>{request.resolution}</bdi> <span className="muted">— {request.resolvedBy ? <>answered by <Who actor={request.resolvedBy} name={request.resolvedByName} /></> : null}{" "}
                {request.resolvedAt ? <Age since={request.resolvedAt} /> : null}</span>
            </p>
          ) : (
            <p>
              <Link href="/attention">Answer in the inbox</Link>
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}

export function ItemView({ id }: { id: string }) {
  const trpc = useTRPC();
  const item = useQuery(trpc.workItems.get.queryOptions({ id }));
  const around = useQuery(trpc.dashboard.neighbourhood.queryOptions({ id }));
  const history = useQuery(trpc.leases.history.queryOptions({ workItemId: id }));
  // The newest events carry the reasons of revocations shown in the lease timeline.
  const events = useQuery(trpc.events.list.queryOptions({ workItemId: id, order: "desc", limit: 200 }));
  const attention = useQuery(trpc.attention.list.queryOptions({ workItemId: id, limit: 200 }));

  if (item.error) {
    const notFound = describeError(item.error).reason === "NOT_FOUND";
    return (
      <>
        <h1>{notFound ? "No such work item" : "Could not load the work item"}</h1>
        {notFound ? <p>There is no work item with id <code>{id}</code>.</p> : <ApiError error={item.error} />}
        <p>
          <Link href="/items">All items</Link>
        </p>
      </>
    );
  }
  if (!item.data) return <Loading what={`work item ${id}`} />;
  const data = item.data;
  const terminal = isTerminalStage(data.stage);

  return (
    <>
      <div className="page-head item-head">
        <div>
          <p className="crumbs">
            <Link href="/items">Items</Link>
            {around.data
              ? [...around.data.ancestors].reverse().map((ancestor) => (
                  <span key={ancestor.id}>
                    {" / "}
                    <ItemIdLink id={ancestor.id} />
                  </span>
                ))
              : null}{" "}
            / <Token text={data.id} code />
          </p>
          <h1>{data.title}</h1>
        </div>
        <dl className="facts">
          <div>
            <dt>Stage</dt>
            <dd><StageBadge stage={data.stage} notBefore={data.notBefore} /></dd>
          </div>
          <div>
            <dt>Project</dt>
            <dd data-testid="item-project"><Token text={data.projectId} /></dd>
          </div>
          <div>
            <dt>Requires</dt>
            <dd data-testid="item-requires"><Capabilities list={data.requires} none="nothing" /></dd>
          </div>
          <div>
            <dt>Concurrency key</dt>
            <dd data-testid="item-concurrency-key">{data.concurrencyKey ? <Token text={data.concurrencyKey} code /> : "—"}</dd>
          </div>
          <div>
            <dt>Not before</dt>
            <dd data-testid="item-not-before"><Time iso={data.notBefore} /></dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd data-testid="item-status">{data.status}</dd>
          </div>
          <div>
            <dt>Priority</dt>
            <dd data-testid="item-priority">{data.priority}</dd>
          </div>
          <div>
            <dt>Previous worker</dt>
            <dd>{data.previousWorkerId ?? "—"}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd><Time iso={data.createdAt} /></dd>
          </div>
        </dl>
      </div>

      <StageReason
        item={data}
        around={around.data}
        cancellation={events.data?.items.find((event) => event.type === "work_item.status_changed" && event.data.to === "cancelled")}
      />
      {data.description ? <p className="description">{data.description}</p> : <p className="muted">No description.</p>}

      <Section title="Neighbourhood" id="neighbourhood">
        <div className="neighbourhood">
          {around.data ? <NeighbourhoodGraph item={data} around={around.data} /> : <Loading what="the graph" />}
          <Relations item={data} around={around.data} />
        </div>
      </Section>

      <div className="two-col">
        <Section title="Lease history" id="lease-history">
          {history.error ? <ApiError error={history.error} /> : null}
          {history.data ? <LeaseTimeline leases={history.data} attention={attention.data?.items ?? []} events={events.data?.items ?? []} /> : <Loading what="lease history" />}
        </Section>
        {!terminal ? (
          <Section title="Operator actions" id="actions">
            {data.currentLease ? (
              <div className="action-form">
                <p>
                  Live lease: <WorkerId id={data.currentLease.workerId} />, epoch {data.currentLease.epoch}
                </p>
                <RevokeLease lease={data.currentLease} />
              </div>
            ) : null}
            <PriorityForm item={data} />
            <QueuePolicyForm item={data} />
            <AddDependencyForm item={data} />
            <CancelForm item={data} />
          </Section>
        ) : null}
      </div>

      <Section title="Attention requests" id="attention">
        {attention.data ? <AttentionRequests attention={attention.data.items} /> : <Loading what="attention requests" />}
      </Section>

      <Section title="Notes" id="notes">
        <NotesPages workItemId={id} />
      </Section>

      <Section title="Event log" id="events">
        <EventPages workItemId={id} />
      </Section>
    </>
  );
}

const PAGE_SIZE = 50;

/** Newest first; "Older notes" adds the next page below (notes.list's cursor). */
function NotesPages({ workItemId }: { workItemId: string }) {
  const trpc = useTRPC();
  const notes = useInfiniteQuery(
    trpc.notes.list.infiniteQueryOptions({ workItemId, order: "desc", limit: PAGE_SIZE }, { getNextPageParam: (page) => page.nextCursor }),
  );
  if (notes.error) return <ApiError error={notes.error} />;
  if (!notes.data) return <Loading what="notes" />;
  const items = notes.data.pages.flatMap((page) => page.items);
  return (
    <div data-testid="notes">
      {items.length === 0 ? (
        <Empty>No notes.</Empty>
      ) : (
        <ul className="plain cards">
          {items.map((note) => (
            <li key={note.id} className="card">
              <p className="muted small">
                <WorkerId id={note.workerId} /> · epoch {note.epoch} · <Time iso={note.createdAt} />
              </p>
              <p className="note-content">{note.content}</p>
            </li>
          ))}
        </ul>
      )}
      <OlderButton query={notes} what="notes" />
    </div>
  );
}

function OlderButton({ query, what }: { query: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown }; what: string }) {
  if (!query.hasNextPage) return null;
  return (
    <button type="button" className="button-small" disabled={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()}>
      Older {what}
    </button>
  );
}

const eventColumns: Column<ItemEvent>[] = [
  { header: "#", kind: "token", numeric: true, cell: (event) => event.sequence },
  { header: "Time", kind: "token", cell: (event) => <Time iso={event.createdAt} /> },
  { header: "Event", kind: "token", cell: (event) => <Token text={event.type} code /> },
  { header: "Actor", kind: "token", cell: (event) => <Who actor={event.actor} name={event.actorName} /> },
  { header: "Epoch", kind: "token", numeric: true, cell: (event) => event.epoch ?? "—" },
  { header: "Details", kind: "text", className: "event-data", cell: (event) => <code>{formatData(event.data)}</code> },
];

/**
 * Newest first, like the notes. events.list has no `cursor` input (its descending cursor is
 * `before`), so tRPC offers no infiniteQueryOptions for it: the infinite query is keyed the way
 * tRPC keys one (live-updates.ts finds it by path and workItemId) and calls the client itself.
 */
function EventPages({ workItemId }: { workItemId: string }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const input = { workItemId, order: "desc" as const, limit: PAGE_SIZE };
  const events = useInfiniteQuery({
    queryKey: [...trpc.events.list.pathKey(), { input, type: "infinite" }],
    queryFn: ({ pageParam, signal }) => client.events.list.query({ ...input, before: pageParam }, { signal }),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (page) => (page.nextCursor === null ? undefined : Number(page.nextCursor)),
  });
  if (events.error) return <ApiError error={events.error} />;
  if (!events.data) return <Loading what="events" />;
  return (
    <>
      <DataTable columns={eventColumns} rows={events.data.pages.flatMap((page) => page.items)} rowKey={(event) => event.sequence} testId="events" className="events" />
      <OlderButton query={events} what="events" />
    </>
  );
}

function formatData(data: Record<string, unknown>): string {
  const entries = Object.entries(data ?? {});
  if (entries.length === 0) return "";
  return entries.map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`).join(", ");
}

