"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { DataTable, type Column } from "./data-table";
import { useProjectId } from "./project";
import { useTRPC } from "./trpc";
import type { Outputs } from "./types";
import { Age, ApiError, Capabilities, Empty, ItemLink, Loading, Section, Token } from "./ui";

/** How many unroutable items the overview and /unroutable ask for (dashboard.unroutable's limit). */
export const UNROUTABLE_LIMIT = 50;

type Unroutable = Outputs["dashboard"]["unroutable"]["items"][number];

const columns: Column<Unroutable>[] = [
  { header: "Item", kind: "text", cell: ({ item }) => <span className="cell"><ItemLink id={item.id} title={item.title} /></span> },
  { header: "Project", kind: "token", cell: ({ item }) => <Token text={item.projectId} /> },
  { header: "Requires", kind: "token", cell: ({ item }) => <Capabilities list={item.requires} /> },
  {
    header: "Why no agent takes it",
    label: "Why",
    kind: "token",
    className: "unroutable-missing",
    cell: ({ missing }) => (
      <>
        needs <Capabilities list={missing} />
      </>
    ),
  },
  { header: "Priority", kind: "token", numeric: true, cell: ({ item }) => item.priority },
  { header: "Waiting", kind: "token", cell: ({ item }) => <Age since={item.createdAt} suffix="" /> },
];

/** Ready items no unrevoked agent token can take (dashboard.unroutable), each with the capabilities nobody has. */
export function UnroutableView() {
  const trpc = useTRPC();
  const unroutable = useQuery(trpc.dashboard.unroutable.queryOptions({ projectId: useProjectId(), limit: UNROUTABLE_LIMIT }));
  const data = unroutable.data;
  return (
    <>
      <div className="page-head">
        <h1>Unroutable items</h1>
      </div>
      <Section title="Ready, but no agent can take them" id="unroutable">
        <p className="hint">
          Each item requires capabilities that no unrevoked agent token has, so no claim will ever return it. Make an agent token with the missing
          capabilities, or change what the item requires.
        </p>
        {unroutable.error ? <ApiError error={unroutable.error} /> : null}
        {!data ? (
          <Loading what="unroutable items" />
        ) : data.items.length === 0 ? (
          <Empty>
            Every ready item can be taken by some agent. <Link href="/">Back to the overview</Link>
          </Empty>
        ) : (
          <>
            <DataTable columns={columns} rows={data.items} rowKey={({ item }) => item.id} rowAttributes={({ item }) => ({ "data-item-id": item.id })} testId="unroutable" />
            {data.total > data.items.length ? (
              <p className="hint">
                Showing {data.items.length} of {data.total}.
              </p>
            ) : null}
          </>
        )}
      </Section>
    </>
  );
}
