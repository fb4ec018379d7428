"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { AttentionAlerts } from "./attention-alerts";
import { humanize } from "./format";
import { useProjectId } from "./project";
import { useTRPC } from "./trpc";
import type { InboxEntry, Stage } from "./types";
import { Age, ApiError, Empty, ItemIdLink, ItemLink, Loading, StageBadge, Time, WorkerId, Who } from "./ui";
import { useUrlState } from "./url-state";

const OTHER = "\u0000other";

function RequestMeta({ request }: { request: InboxEntry }) {
  return (
    <dl className="meta">
      <div>
        <dt>Kind</dt>
        <dd>
          <span className="badge kind">{request.kind}</span>
        </dd>
      </div>
      <div>
        <dt>Blocking</dt>
        <dd>{request.blocking ? <span className="badge badge-warn">blocking</span> : <span className="badge">not blocking</span>}</dd>
      </div>
      <div>
        <dt>Worker</dt>
        <dd><WorkerId id={request.workerId} /></dd>
      </div>
      <div>
        <dt>Item</dt>
        <dd>
          <ItemLink id={request.workItemId} title={request.workItemTitle} />
        </dd>
      </div>
      <div>
        <dt>Asked</dt>
        <dd>
          <Age since={request.createdAt} />
        </dd>
      </div>
    </dl>
  );
}

interface Resolved {
  id: string;
  question: string;
  workItemId: string;
  stage: Stage;
}

function AnswerForm({ request, onResolved }: { request: InboxEntry; onResolved: (resolved: Resolved) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const id = useId();
  const hasOptions = request.options.length > 0;
  const [choice, setChoice] = useState<string>(hasOptions ? "" : OTHER);
  const [written, setWritten] = useState("");
  const resolve = useMutation(
    trpc.attention.resolve.mutationOptions({
      onSuccess: async (result) => {
        onResolved({ id: result.request.id, question: result.request.question, workItemId: result.workItem.id, stage: result.workItem.stage });
        await queryClient.invalidateQueries();
      },
    }),
  );
  const resolution = choice === OTHER ? written.trim() : choice;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!resolution) return;
    resolve.mutate({ id: request.id, resolution });
  }

  return (
    <form className="answer" onSubmit={submit} aria-label={`Answer: ${request.question}`}>
      {hasOptions ? (
        <fieldset>
          <legend>Choose an answer</legend>
          {request.options.map((option, index) => (
            <label key={index} className="choice">
              <input type="radio" name={`${id}-choice`} value={option} checked={choice === option} onChange={() => setChoice(option)} />
              <span>{option}</span>
            </label>
          ))}
          <label className="choice">
            <input type="radio" name={`${id}-choice`} value={OTHER} checked={choice === OTHER} onChange={() => setChoice(OTHER)} />
            <span>Write a different answer</span>
          </label>
        </fieldset>
      ) : null}
      {choice === OTHER ? (
        <div className="stack">
          <label htmlFor={`${id}-text`}>Resolution</label>
          <textarea id={`${id}-text`} rows={3} value={written} onChange={(e) => setWritten(e.target.value)} placeholder="What should the agent do?" />
        </div>
      ) : null}
      <ApiError error={resolve.error} />
      <div className="actions">
        <button type="submit" className="button-primary" disabled={!resolution || resolve.isPending}>
          {resolve.isPending ? "Sending…" : "Resolve"}
        </button>
      </div>
    </form>
  );
}

function OpenRequests() {
  const trpc = useTRPC();
  const open = useQuery(trpc.dashboard.inbox.queryOptions({ projectId: useProjectId(), status: "open", limit: 200 }));
  const [resolved, setResolved] = useState<Resolved[]>([]);
  return (
    <>
      {resolved.length > 0 ? (
        <div className="flash" role="status" data-testid="just-resolved">
          {resolved.map((entry) => (
            <p key={entry.id}>
              Resolved “<bdi>{entry.question}</bdi>”. Item <ItemIdLink id={entry.workItemId} /> is now{" "}
              <StageBadge stage={entry.stage} />
            </p>
          ))}
        </div>
      ) : null}
      {open.error ? <ApiError error={open.error} /> : null}
      {!open.data ? (
        <Loading what="open requests" />
      ) : open.data.length === 0 ? (
        <Empty>Inbox zero: no agent is waiting for an answer.</Empty>
      ) : (
        <ol className="requests" data-testid="open-requests">
          {open.data.map((request) => (
            <li key={request.id} className={`request ${request.blocking ? "request-blocking" : ""}`} data-request-id={request.id}>
              <article aria-labelledby={`q-${request.id}`}>
                <h2 id={`q-${request.id}`} className="question">
                  {request.question}
                </h2>
                <RequestMeta request={request} />
                {request.context ? <p className="context">{request.context}</p> : null}
                <AnswerForm request={request} onResolved={(entry) => setResolved((list) => [entry, ...list].slice(0, 5))} />
              </article>
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

function ResolvedRequests() {
  const trpc = useTRPC();
  const resolved = useQuery(trpc.dashboard.inbox.queryOptions({ projectId: useProjectId(), status: "resolved", limit: 100 }));
  if (resolved.error) return <ApiError error={resolved.error} />;
  if (!resolved.data) return <Loading what="resolved requests" />;
  if (resolved.data.length === 0) return <Empty>Nothing resolved yet.</Empty>;
  return (
    <ol className="requests" data-testid="resolved-requests">
      {resolved.data.map((request) => (
        <li key={request.id} className="request request-resolved" data-request-id={request.id}>
          <article aria-labelledby={`r-${request.id}`}>
            <h2 id={`r-${request.id}`} className="question">
              {request.question}
            </h2>
            <dl className="meta">
              <div>
                <dt>Item</dt>
                <dd>
                  <ItemLink id={request.workItemId} title={request.workItemTitle} /> <StageBadge stage={request.workItemStage} />
                </dd>
              </div>
              <div>
                <dt>Asked by</dt>
                <dd><WorkerId id={request.workerId} /></dd>
              </div>
              <div>
                <dt>Kind</dt>
                <dd>
                  <span className="badge kind">{humanize(request.kind)}</span>
                </dd>
              </div>
              <div>
                <dt>Resolved by</dt>
                <dd data-testid="resolved-by">
                  {request.resolvedBy ? (
                    <>
                      <Who actor={request.resolvedBy} name={request.resolvedByName} />
                      {request.resolvedAt ? (
                        <>
                          {" "}
                          <Age since={request.resolvedAt} />
                        </>
                      ) : null}
                    </>
                  ) : null}
                </dd>
              </div>
              <div>
                <dt>Resolved</dt>
                <dd>
                  <Time iso={request.resolvedAt} />
                </dd>
              </div>
            </dl>
            <p className="resolution">
              <span className="label">Answer</span> <bdi>{request.resolution}</bdi>
            </p>
          </article>
        </li>
      ))}
    </ol>
  );
}

export function AttentionInbox({ initialTab }: { initialTab: "open" | "resolved" }) {
  const [tab, setTab] = useUrlState("tab", initialTab === "resolved" ? "resolved" : "");
  const current = tab === "resolved" ? "resolved" : "open";
  return (
    <>
      <div className="page-head">
        <h1>Attention inbox</h1>
        <AttentionAlerts />
        <div className="segmented" role="group" aria-label="Show requests">
          <button type="button" aria-pressed={current === "open"} onClick={() => setTab("")}>
            Open
          </button>
          <button type="button" aria-pressed={current === "resolved"} onClick={() => setTab("resolved")}>
            Resolved
          </button>
        </div>
      </div>
      <p className="hint">
        {current === "open"
          ? "Questions agents are waiting on, oldest first. Answering a blocking request lets its item be claimed again."
          : "Answered requests, most recent first."}
      </p>
      {current === "open" ? <OpenRequests /> : <ResolvedRequests />}
    </>
  );
}
