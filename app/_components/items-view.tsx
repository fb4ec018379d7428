"use client";

import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useState, type FormEvent } from "react";
import { DataTable, type Column } from "./data-table";
import { humanize } from "./format";
import { useTRPC } from "./trpc";
import { STAGES, type Stage, type WorkItem } from "./types";
import { Age, ApiError, Capabilities, Empty, ItemIdLink, ItemLink, Loading, StageBadge, Time, Token, WorkerId } from "./ui";
import { useProjectId } from "./project";
import { itemHref } from "@work-graph/contract";
import { useUrlState } from "./url-state";

const PAGE_SIZE = 25;

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

const splitIds = (text: string) => text.split(/[\s,]+/).map((id) => id.trim()).filter(Boolean);

export function CreateItemForm({ onCreated }: { onCreated?: (item: WorkItem) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const projectId = useProjectId();
  const [fields, setFields] = useState({ id: "", title: "", description: "", parentId: "", dependsOn: "", priority: "0" });
  const [created, setCreated] = useState<WorkItem | null>(null);
  const create = useMutation(
    trpc.workItems.create.mutationOptions({
      onSuccess: async (item) => {
        setCreated(item);
        setFields((f) => ({ ...f, id: "", title: "", description: "" }));
        onCreated?.(item);
        await queryClient.invalidateQueries();
      },
    }),
  );
  const set = (name: keyof typeof fields) => (event: { target: { value: string } }) => setFields((f) => ({ ...f, [name]: event.target.value }));

  function submit(event: FormEvent) {
    event.preventDefault();
    setCreated(null);
    const priority = Number(fields.priority || 0);
    create.mutate({
      projectId,
      id: fields.id.trim() || undefined,
      title: fields.title,
      description: fields.description.trim() ? fields.description : undefined,
      parentId: fields.parentId.trim() || undefined,
      dependsOn: splitIds(fields.dependsOn),
      priority: Number.isFinite(priority) ? Math.trunc(priority) : 0,
    });
  }

  return (
    <form className="create-form" onSubmit={submit} aria-label="Create a work item">
      <div className="grid-form">
        <div className="field">
          <label htmlFor="new-title">Title</label>
          <input id="new-title" required value={fields.title} onChange={set("title")} />
        </div>
        <div className="field">
          <label htmlFor="new-id">Id <span className="muted">(optional)</span></label>
          <input id="new-id" value={fields.id} onChange={set("id")} placeholder="generated when empty" pattern="[a-z0-9][a-z0-9._\-]{0,99}" />
        </div>
        <div className="field">
          <label htmlFor="new-priority">Priority</label>
          <input id="new-priority" type="number" step={1} value={fields.priority} onChange={set("priority")} />
        </div>
        <div className="field">
          <label htmlFor="new-parent">Parent id <span className="muted">(optional)</span></label>
          <input id="new-parent" value={fields.parentId} onChange={set("parentId")} />
        </div>
        <div className="field field-wide">
          <label htmlFor="new-depends">Depends on <span className="muted">(ids, comma separated)</span></label>
          <input id="new-depends" value={fields.dependsOn} onChange={set("dependsOn")} />
        </div>
        <div className="field field-wide">
          <label htmlFor="new-description">Description</label>
          <textarea id="new-description" rows={3} value={fields.description} onChange={set("description")} />
        </div>
      </div>
      <ApiError error={create.error} />
      {created ? (
        <p className="success" role="status">
          Created <Link href={itemHref(created.id)}>{created.id}</Link> ({humanize(created.stage)}).
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="button-primary" disabled={create.isPending || !fields.title.trim()}>
          {create.isPending ? "Creating…" : "Create item"}
        </button>
      </div>
    </form>
  );
}

const itemColumns: Column<WorkItem>[] = [
  { header: "Item", kind: "text", cell: (item) => <span className="cell"><ItemLink id={item.id} title={item.title} /></span> },
  { header: "Stage", kind: "token", cell: (item) => <StageBadge stage={item.stage} notBefore={item.notBefore} /> },
  { header: "Priority", kind: "token", numeric: true, cell: (item) => item.priority },
  { header: "Project", kind: "token", className: "item-project", cell: (item) => <Token text={item.projectId} /> },
  { header: "Requires", kind: "token", className: "item-requires", cell: (item) => <Capabilities list={item.requires} /> },
  { header: "Concurrency key", label: "Key", kind: "token", className: "item-key", cell: (item) => (item.concurrencyKey ? <Token text={item.concurrencyKey} code /> : <span className="muted">—</span>) },
  { header: "Not before", kind: "token", className: "item-not-before", cell: (item) => <Time iso={item.notBefore} /> },
  { header: "Parent", kind: "token", cell: (item) => (item.parentId ? <ItemIdLink id={item.parentId} /> : <span className="muted">—</span>) },
  { header: "Worker", kind: "token", cell: (item) => (item.currentLease ? <WorkerId id={item.currentLease.workerId} /> : <span className="muted">—</span>) },
  { header: "Created", kind: "token", cell: (item) => <Age since={item.createdAt} /> },
];

export function ItemsView({ initialStage, initialSearch }: { initialStage: string; initialSearch: string }) {
  const trpc = useTRPC();
  const projectId = useProjectId();
  const [stage, setStage] = useUrlState("stage", STAGES.includes(initialStage as Stage) ? initialStage : "");
  const [search, setSearch] = useUrlState("q", initialSearch);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  // Another project starts again at the first page.
  const [pagedProject, setPagedProject] = useState(projectId);
  if (pagedProject !== projectId) {
    setPagedProject(projectId);
    setCursors([undefined]);
  }
  const [creating, setCreating] = useState(false);
  const debouncedSearch = useDebounced(search.trim(), 250);
  const cursor = cursors.at(-1);


  const items = useQuery({
    ...trpc.workItems.list.queryOptions({
      projectId,
      stage: stage ? (stage as Stage) : undefined,
      search: debouncedSearch || undefined,
      limit: PAGE_SIZE,
      cursor,
    }),
    placeholderData: keepPreviousData,
  });

  return (
    <>
      <div className="page-head">
        <h1>Items</h1>
        <button type="button" className={creating ? "button-quiet" : "button-primary"} aria-expanded={creating} aria-controls="create-panel" onClick={() => setCreating((v) => !v)}>
          {creating ? "Close" : "New item"}
        </button>
      </div>
      {creating ? (
        <section id="create-panel" className="panel" aria-labelledby="create-heading">
          <h2 id="create-heading">New work item</h2>
          <CreateItemForm />
        </section>
      ) : null}
      <form className="filters" role="search" onSubmit={(event) => event.preventDefault()}>
        <div className="field">
          <label htmlFor="stage-filter">Stage</label>
          <select id="stage-filter" value={stage} onChange={(e) => {
              setStage(e.target.value);
              setCursors([undefined]);
            }}>
            <option value="">All stages</option>
            {STAGES.map((s) => (
              <option key={s} value={s}>
                {humanize(s)}
              </option>
            ))}
          </select>
        </div>
        <div className="field field-grow">
          <label htmlFor="item-search">Search id or title</label>
          <input id="item-search" type="search" value={search} onChange={(e) => {
              setSearch(e.target.value);
              setCursors([undefined]);
            }} placeholder="e.g. deploy" />
        </div>
      </form>
      {items.error ? <ApiError error={items.error} /> : null}
      {!items.data ? (
        <Loading what="items" />
      ) : items.data.items.length === 0 ? (
        <Empty>{cursors.length > 1 ? "No more items." : "No items match."}</Empty>
      ) : (
        <DataTable
          columns={itemColumns}
          rows={items.data.items}
          rowKey={(item) => item.id}
          rowAttributes={(item) => ({ "data-item-id": item.id, className: item.stage === "needs_attention" ? "highlight-row" : undefined })}
          testId="items-table"
        />
      )}
      <nav className="pager" aria-label="Pages">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors((list) => list.slice(0, -1))}>
          Previous
        </button>
        <span aria-live="polite">Page {cursors.length}</span>
        <button
          type="button"
          disabled={!items.data?.nextCursor}
          onClick={() => {
            const next = items.data?.nextCursor;
            if (next) setCursors((list) => [...list, next]);
          }}
        >
          Next
        </button>
      </nav>
    </>
  );
}
