"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment, useState, type FormEvent } from "react";
import { POLL_MS } from "./constants";
import { DataTable, type Column } from "./data-table";
import { useTRPC } from "./trpc";
import type { Outputs } from "./types";
import { ApiError, Empty, Loading, Section, Time, Token } from "./ui";

type Webhook = Outputs["webhooks"]["list"][number];

const EMPTY_FORM = { url: "", events: "*", format: "json" as "json" | "slack", label: "" };

function AddWebhook({ onCreated }: { onCreated: (created: { id: string; secret: string }) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [fields, setFields] = useState(EMPTY_FORM);
  const create = useMutation(
    trpc.webhooks.create.mutationOptions({
      onSuccess: async (created) => {
        onCreated(created);
        setFields(EMPTY_FORM);
        await queryClient.invalidateQueries(trpc.webhooks.list.queryFilter());
      },
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const events = fields.events.split(",").map((e) => e.trim()).filter(Boolean);
    create.mutate({ url: fields.url.trim(), events: events.length > 0 ? events : ["*"], format: fields.format, label: fields.label.trim() || undefined });
  };
  return (
    <form className="create-form" onSubmit={submit} aria-label="Add a webhook">
      <div className="grid-form">
        <div className="field field-wide">
          <label htmlFor="webhook-url">URL</label>
          <input id="webhook-url" type="url" required placeholder="https://hooks.slack.com/services/…" value={fields.url} onChange={(e) => setFields({ ...fields, url: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor="webhook-format">Format</label>
          <select id="webhook-format" value={fields.format} onChange={(e) => setFields({ ...fields, format: e.target.value === "slack" ? "slack" : "json" })}>
            <option value="json">JSON (signed event)</option>
            <option value="slack">Slack message</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="webhook-label">Label <span className="muted">(optional)</span></label>
          <input id="webhook-label" value={fields.label} maxLength={200} onChange={(e) => setFields({ ...fields, label: e.target.value })} />
        </div>
        <div className="field field-wide">
          <label htmlFor="webhook-events">Events <span className="muted">(types or prefixes, comma separated: attention.*, lease.ended, *)</span></label>
          <input id="webhook-events" value={fields.events} onChange={(e) => setFields({ ...fields, events: e.target.value })} />
        </div>
      </div>
      <div className="actions">
        <button type="submit" className="button-primary" disabled={create.isPending}>
          Add webhook
        </button>
      </div>
      <ApiError error={create.error} />
    </form>
  );
}

type Delivery = Outputs["webhooks"]["deliveries"][number];

const deliveryColumns: Column<Delivery>[] = [
  { header: "Created", kind: "token", cell: (d) => <Time iso={d.createdAt} /> },
  {
    header: "Event",
    kind: "token",
    cell: (d) => (
      <>
        <Token text={d.eventType} code /> {d.eventSequence > 0 ? <span className="muted">#{d.eventSequence}</span> : null}
      </>
    ),
  },
  { header: "Status", kind: "token", cell: (d) => <span className={`badge webhook-status-${d.status}`}>{d.status}</span> },
  { header: "Attempts", kind: "token", numeric: true, cell: (d) => d.attempts },
  {
    header: "Response",
    kind: "text",
    cell: (d) => (
      <>
        {d.responseStatus ?? <span className="muted">—</span>}
        {d.responseBody ? (
          <details>
            <summary>body</summary>
            <pre className="webhook-response">{d.responseBody}</pre>
          </details>
        ) : null}
      </>
    ),
  },
  { header: "Error", kind: "text", cell: (d) => d.error ?? <span className="muted">—</span> },
  { header: "Next attempt", kind: "token", cell: (d) => <Time iso={d.nextAttemptAt} /> },
];

function Deliveries({ webhookId }: { webhookId: string }) {
  const trpc = useTRPC();
  // Attempts write no event, so the event stream cannot announce them: poll every second while
  // a delivery is still pending (the first attempt comes within about 3 s of its event).
  const deliveries = useQuery({
    ...trpc.webhooks.deliveries.queryOptions({ webhookId, limit: 50 }),
    refetchInterval: (query) => (query.state.data?.some((delivery) => delivery.status === "pending") ? 1_000 : POLL_MS),
  });
  if (deliveries.error) return <ApiError error={deliveries.error} />;
  if (!deliveries.data) return <Loading what="deliveries" />;
  if (deliveries.data.length === 0) return <Empty>No deliveries yet. Send a test event, or wait for a matching event.</Empty>;
  return (
    <DataTable
      columns={deliveryColumns}
      rows={deliveries.data}
      rowKey={(delivery) => delivery.id}
      rowAttributes={(delivery) => ({ "data-delivery-id": delivery.id, "data-status": delivery.status })}
      testId="webhook-deliveries"
    />
  );
}

export function WebhooksView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const webhooks = useQuery(trpc.webhooks.list.queryOptions());
  const [created, setCreated] = useState<{ id: string; secret: string } | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [confirmDelete, setConfirmDelete] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries(trpc.webhooks.pathFilter());
  const test = useMutation(trpc.webhooks.test.mutationOptions({ onSuccess: (delivery) => { setSelected(delivery.webhookId); void refresh(); } }));
  const remove = useMutation(
    trpc.webhooks.delete.mutationOptions({
      onSuccess: ({ id }) => {
        if (selected === id) setSelected(null);
        setConfirmDelete(null);
        void refresh();
      },
    }),
  );
  const shown = selected ?? webhooks.data?.[0]?.id ?? null;
  const webhookColumns: Column<Webhook>[] = [
    { header: "Webhook", kind: "text", cell: (w) => <>{w.label ? <strong>{w.label}</strong> : null} <code className="webhook-url">{w.url}</code></> },
    {
      header: "Events",
      kind: "text",
      cell: (w) => w.events.map((pattern, index) => <Fragment key={pattern}>{index > 0 ? ", " : null}<Token text={pattern} /></Fragment>),
    },
    { header: "Format", kind: "token", cell: (w) => w.format },
    {
      header: "Health",
      kind: "text",
      cell: (w) =>
        w.failing ? (
          <span className="badge badge-warn" title={w.lastError ?? undefined}>failing: {w.lastError}</span>
        ) : w.lastDeliveredAt ? (
          <span>delivered <Time iso={w.lastDeliveredAt} /></span>
        ) : (
          <span className="muted">nothing delivered yet</span>
        ),
    },
    {
      header: "Actions",
      kind: "text",
      cell: (w) => (
        <div className="row">
          <button type="button" className="button-small" onClick={() => setSelected(w.id)} aria-pressed={w.id === shown}>
            Deliveries
          </button>
          <button type="button" className="button-small" disabled={test.isPending} onClick={() => test.mutate({ id: w.id })}>
            Send test event
          </button>
          {confirmDelete === w.id ? (
            <button type="button" className="button-small button-danger" disabled={remove.isPending} onClick={() => remove.mutate({ id: w.id })}>
              Confirm delete
            </button>
          ) : (
            <button type="button" className="button-small button-danger" onClick={() => setConfirmDelete(w.id)}>
              Delete
            </button>
          )}
        </div>
      ),
    },
  ];

  return (
    <>
      <div className="page-head">
        <h1>Webhooks</h1>
      </div>
      <p className="hint">
        Work Graph POSTs each matching event, signed with the webhook&apos;s secret, and retries for 24 h. Slack format posts one
        readable line to a Slack incoming webhook. See docs/webhooks.md for verifying signatures. The <code>slack_app</code> webhook is
        the Slack app (questions answered from Slack), set up with the WORK_GRAPH_SLACK_* variables: docs/integrations.md.
      </p>
      <Section title="Add a webhook" id="add-webhook">
        <AddWebhook onCreated={(value) => { setCreated(value); setSelected(value.id); }} />
        {created ? (
          <div className="callout" role="status" data-testid="new-secret">
            <p>
              Signing secret — copy it now, it is not shown again: <code className="webhook-secret">{created.secret}</code>
            </p>
            <button type="button" className="button-quiet button-small" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        ) : null}
      </Section>
      <Section title="Webhooks" id="webhook-list">
        {webhooks.error ? <ApiError error={webhooks.error} /> : null}
        <ApiError error={test.error ?? remove.error} />
        {!webhooks.data ? (
          <Loading what="webhooks" />
        ) : webhooks.data.length === 0 ? (
          <Empty>No webhooks yet.</Empty>
        ) : (
          <DataTable
            columns={webhookColumns}
            rows={webhooks.data}
            rowKey={(w) => w.id}
            rowAttributes={(w) => ({ "data-webhook-id": w.id, className: w.id === shown ? "highlight-row" : undefined })}
            testId="webhooks"
          />
        )}
      </Section>
      {shown ? (
        <Section title="Recent deliveries" id="webhook-deliveries">
          <p className="hint">
            Newest first, for <code>{webhooks.data?.find((w) => w.id === shown)?.url}</code>. A failed attempt is retried about 2 s later,
            doubling up to 10 min apart, for 24 h.
          </p>
          <Deliveries webhookId={shown} />
        </Section>
      ) : null}
    </>
  );
}
