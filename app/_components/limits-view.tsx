"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { CAPABILITY_PATTERN } from "@work-graph/contract";
import { DataTable, type Column } from "./data-table";
import { useTRPC } from "./trpc";
import type { Outputs } from "./types";
import { ApiError, Empty, Loading, Section, Time, Token } from "./ui";

type Limit = Outputs["limits"]["list"][number];

/** limits.set's bounds (API.md "Queue policy"). */
const MAX_LEASES = 10_000;

/** The key pattern as an HTML `pattern` (the whole value must match). */
const KEY_PATTERN = CAPABILITY_PATTERN.source.replace(/^\^/, "").replace(/\$$/, "");

function useInvalidateAll() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries();
}

function LimitState({ limit }: { limit: Limit }) {
  if (limit.maxLeases === 0) return <span className="badge badge-warn">paused</span>;
  if (limit.liveLeases >= limit.maxLeases) return <span className="badge badge-warn">full</span>;
  return <span className="badge stage-ready">room for {limit.maxLeases - limit.liveLeases}</span>;
}

function SetLimitForm() {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const [key, setKey] = useState("");
  const [max, setMax] = useState("1");
  const set = useMutation(trpc.limits.set.mutationOptions({ onSuccess: () => { setKey(""); return invalidate(); } }));
  return (
    <form
      className="action-form limit-form"
      aria-label="Set a limit"
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        set.mutate({ key: key.trim(), maxLeases: Math.trunc(Number(max)) });
      }}
    >
      <div className="row">
        <div className="field">
          <label htmlFor="limit-key">Concurrency key</label>
          <input id="limit-key" value={key} onChange={(e) => setKey(e.target.value)} pattern={KEY_PATTERN} placeholder="e.g. staging-db" spellCheck={false} required />
        </div>
        <div className="field">
          <label htmlFor="limit-max">Max live leases</label>
          <input id="limit-max" type="number" min={0} max={MAX_LEASES} step={1} value={max} onChange={(e) => setMax(e.target.value)} required />
        </div>
        <button type="submit" className="button-primary" disabled={set.isPending || !key.trim() || max === ""}>
          Set limit
        </button>
      </div>
      <p className="hint">0 pauses the key. Lowering a limit ends no lease: new claims wait until fewer leases are live.</p>
      <ApiError error={set.error} />
    </form>
  );
}

function LimitActions({ limit }: { limit: Limit }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const inputId = useId();
  const [mode, setMode] = useState<"idle" | "edit" | "delete">("idle");
  const [max, setMax] = useState(String(limit.maxLeases));
  const done = () => {
    setMode("idle");
    return invalidate();
  };
  const set = useMutation(trpc.limits.set.mutationOptions({ onSuccess: done }));
  const remove = useMutation(trpc.limits.delete.mutationOptions({ onSuccess: done }));

  if (mode === "edit") {
    return (
      <form
        className="revoke-form"
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          set.mutate({ key: limit.key, maxLeases: Math.trunc(Number(max)) });
        }}
      >
        <label htmlFor={inputId}>Max live leases for {limit.key}</label>
        <input id={inputId} type="number" min={0} max={MAX_LEASES} step={1} value={max} onChange={(e) => setMax(e.target.value)} autoFocus required />
        <div className="row">
          <button type="submit" className="button-small button-primary" disabled={set.isPending || max === ""}>
            Save
          </button>
          <button type="button" className="button-small button-quiet" onClick={() => setMode("idle")}>
            Cancel
          </button>
        </div>
        <ApiError error={set.error} />
      </form>
    );
  }
  if (mode === "delete") {
    return (
      <div className="revoke-form" role="group" aria-label={`Delete the limit on ${limit.key}`}>
        <p>Delete the limit on <bdi>{limit.key}</bdi>? The key becomes unlimited.</p>
        <div className="row">
          <button type="button" className="button-small button-danger" disabled={remove.isPending} onClick={() => remove.mutate({ key: limit.key })}>
            Delete limit
          </button>
          <button type="button" className="button-small button-quiet" onClick={() => setMode("idle")}>
            Keep it
          </button>
        </div>
        <ApiError error={remove.error} />
      </div>
    );
  }
  return (
    <div className="row">
      <button type="button" className="button-small" aria-label={`Edit the limit on ${limit.key}`} onClick={() => {
          setMax(String(limit.maxLeases));
          setMode("edit");
        }}>
        Edit
      </button>
      <button type="button" className="button-small button-danger" aria-label={`Delete the limit on ${limit.key}…`} onClick={() => setMode("delete")}>
        Delete…
      </button>
    </div>
  );
}

const columns: Column<Limit>[] = [
  { header: "Key", kind: "token", cell: (limit) => <Token text={limit.key} code /> },
  { header: "Limit", kind: "token", numeric: true, className: "limit-max", cell: (limit) => limit.maxLeases },
  { header: "Live leases", kind: "token", numeric: true, className: "limit-live", cell: (limit) => limit.liveLeases },
  { header: "State", kind: "token", cell: (limit) => <LimitState limit={limit} /> },
  { header: "Updated", kind: "token", cell: (limit) => <Time iso={limit.updatedAt} /> },
];

const actionsColumn: Column<Limit> = { header: "Actions", hideHeader: true, kind: "text", cell: (limit) => <LimitActions limit={limit} /> };

/** /limits: limits.list for everyone; set, edit and delete for operators and admins. */
export function LimitsView({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const limits = useQuery(trpc.limits.list.queryOptions({}));
  return (
    <>
      <div className="page-head">
        <h1>Limits</h1>
      </div>
      <Section title="Concurrency limits" id="limits">
        <p className="hint">
          Items with a concurrency key share its limit: never more live leases on the key than its limit, however many agents claim at once. A key without a limit is unlimited.
          {canEdit ? null : " Only an operator or an admin can change limits."}
        </p>
        {canEdit ? <SetLimitForm /> : null}
        {limits.error ? <ApiError error={limits.error} /> : null}
        {!limits.data ? (
          <Loading what="limits" />
        ) : limits.data.length === 0 ? (
          <Empty>No limits: every key is unlimited.</Empty>
        ) : (
          <DataTable
            columns={canEdit ? [...columns, actionsColumn] : columns}
            rows={limits.data}
            rowKey={(limit) => limit.key}
            rowAttributes={(limit) => ({ "data-limit-key": limit.key })}
            testId="limits"
          />
        )}
      </Section>
    </>
  );
}
