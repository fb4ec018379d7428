"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { DataTable, type Column } from "./data-table";
import { useTRPC } from "./trpc";
import type { Outputs } from "./types";
import { Age, ApiError, Empty, Loading, Section, Token } from "./ui";

type Person = Outputs["people"]["list"][number];
type PersonalToken = Outputs["people"]["tokens"][number];

/** Admins: everybody who signed in, with disable / enable (disabling ends their sessions and revokes their tokens). */
export function PeopleView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const people = useQuery(trpc.people.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries(trpc.people.pathFilter());
  const disable = useMutation(trpc.people.disable.mutationOptions({ onSuccess: () => void refresh() }));
  const enable = useMutation(trpc.people.enable.mutationOptions({ onSuccess: () => void refresh() }));
  const columns: Column<Person>[] = [
    { header: "Name", kind: "text", cell: (person) => <bdi>{person.name ?? person.email ?? person.subject}</bdi> },
    { header: "Email", kind: "token", cell: (person) => (person.email ? <Token text={person.email} /> : <span className="muted">—</span>) },
    { header: "Role", kind: "token", cell: (person) => person.role },
    { header: "Last seen", kind: "token", cell: (person) => <Age since={person.lastSeenAt} /> },
    {
      header: "State",
      kind: "token",
      cell: (person) => (person.disabledAt ? <span className="badge badge-drained">disabled</span> : <span className="badge stage-ready">active</span>),
    },
    {
      header: "Actions",
      hideHeader: true,
      kind: "text",
      cell: (person) =>
        person.disabledAt ? (
          <button type="button" className="button-small" disabled={enable.isPending} onClick={() => enable.mutate({ id: person.id })}>
            Enable {person.name ?? person.email ?? person.subject}
          </button>
        ) : (
          <button type="button" className="button-small button-danger" disabled={disable.isPending} onClick={() => disable.mutate({ id: person.id })}>
            Disable {person.name ?? person.email ?? person.subject}
          </button>
        ),
    },
  ];
  return (
    <>
      <div className="page-head">
        <h1>People</h1>
      </div>
      <p className="muted">
        Everyone who signed in with the identity provider. Roles come from their groups at each sign-in. Disabling someone ends their
        dashboard sessions at their next request and revokes their CLI tokens.
      </p>
      <Section title="People" id="people-list">
        {disable.error ? <ApiError error={disable.error} /> : null}
        {enable.error ? <ApiError error={enable.error} /> : null}
        {people.error ? (
          <ApiError error={people.error} />
        ) : !people.data ? (
          <Loading what="people" />
        ) : people.data.length === 0 ? (
          <Empty>Nobody has signed in with the identity provider yet.</Empty>
        ) : (
          <DataTable columns={columns} rows={people.data} rowKey={(person) => person.id} testId="people" rowAttributes={(person) => ({ "data-subject": person.subject })} />
        )}
      </Section>
    </>
  );
}

/** A signed-in person's own CLI tokens: create (shown once), list, revoke. */
export function PersonalTokensView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const tokens = useQuery(trpc.people.tokens.queryOptions({}));
  const [label, setLabel] = useState("");
  const [created, setCreated] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries(trpc.people.tokens.pathFilter());
  const create = useMutation(
    trpc.people.createToken.mutationOptions({
      onSuccess: ({ token }) => {
        setCreated(token);
        setLabel("");
        void refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.people.revokeToken.mutationOptions({ onSuccess: () => void refresh() }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ label: label.trim() || undefined });
  };
  const columns: Column<PersonalToken>[] = [
    { header: "Label", kind: "text", cell: (token) => <bdi>{token.label}</bdi> },
    { header: "Created", kind: "token", cell: (token) => <Age since={token.createdAt} /> },
    { header: "Last used", kind: "token", cell: (token) => (token.lastUsedAt ? <Age since={token.lastUsedAt} /> : <span className="muted">never</span>) },
    {
      header: "Actions",
      hideHeader: true,
      kind: "text",
      cell: (token) =>
        token.revokedAt ? (
          <span className="muted">revoked</span>
        ) : (
          <button type="button" className="button-small button-danger" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: token.id })}>
            Revoke {token.label}
          </button>
        ),
    },
  ];
  return (
    <>
      <div className="page-head">
        <h1>Your CLI tokens</h1>
      </div>
      <p className="muted">
        Operator tokens for your own command line (<code>work-graph</code> CLI, scripts). What you do with them is recorded as you.
      </p>
      <Section title="Create a token" id="create-token">
        <form className="create-form" onSubmit={submit} aria-label="Create a CLI token">
          <label htmlFor="token-label">Label</label> <input id="token-label" maxLength={200} value={label} onChange={(e) => setLabel(e.target.value)} />{" "}
          <button type="submit" className="button-primary" disabled={create.isPending}>
            Create token
          </button>
        </form>
        {create.error ? <ApiError error={create.error} /> : null}
        {created ? (
          <p className="callout" role="status">
            Your new token (shown once): <code data-testid="new-token">{created}</code>
          </p>
        ) : null}
      </Section>
      <Section title="Tokens" id="token-list">
        {tokens.error ? (
          <ApiError error={tokens.error} />
        ) : !tokens.data ? (
          <Loading what="tokens" />
        ) : tokens.data.length === 0 ? (
          <Empty>No CLI tokens yet.</Empty>
        ) : (
          <DataTable columns={columns} rows={tokens.data} rowKey={(token) => token.id} testId="personal-tokens" />
        )}
      </Section>
    </>
  );
}
