"use client";

import type { Query, QueryClient } from "@tanstack/react-query";
import type { TRPCClient } from "@trpc/client";
import { useEffect } from "react";
import type { ApiRouter } from "@work-graph/contract";

/*
 * Live dashboard: one events.stream subscription (SSE) per tab. Each committed event
 * invalidates the queries it can affect, so the active ones refetch at once; everything else
 * (and a stream that is down) is covered by the slow fallback poll (POLL_MS). Countdowns tick
 * in the browser (clock.ts), so they need no refetch.
 */

/** Queries about one work item, by the input field naming it: other items' events leave them alone. */
const ITEM_SCOPED: Record<string, "id" | "workItemId"> = {
  "workItems.get": "id",
  "leases.history": "workItemId",
  "notes.list": "workItemId",
  "attention.list": "workItemId",
  "events.list": "workItemId",
};

/** Events arriving within this window are handled with one invalidation (a release that readies 1,000 items is one refetch). */
const BATCH_MS = 50;

function affected(query: Query, changedItems: ReadonlySet<string>): boolean {
  const [path, meta] = query.queryKey as [unknown, { input?: Record<string, unknown> } | undefined];
  if (!Array.isArray(path)) return true;
  const field = ITEM_SCOPED[path.join(".")];
  const itemId = field ? meta?.input?.[field] : undefined;
  return typeof itemId !== "string" || changedItems.has(itemId);
}

/**
 * `onError`: the stream was refused or ended with an error (an ended session: UNAUTHENTICATED).
 * `projectId`: the project switcher's choice; other projects' events then wake nothing.
 */
export function useLiveUpdates(client: TRPCClient<ApiRouter>, queryClient: QueryClient, onError: (error: unknown) => void, projectId: string | undefined) {
  useEffect(() => {
    let changed = new Set<string>();
    let everything = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      timer = undefined;
      const items = changed;
      const all = everything;
      changed = new Set();
      everything = false;
      void queryClient.invalidateQueries({ predicate: (query) => all || affected(query, items) });
    };
    const schedule = () => {
      timer ??= setTimeout(flush, BATCH_MS);
    };
    const subscription = client.events.stream.subscribe({ projectId }, {
      // (Re)connected: whatever happened while the stream was down is unknown.
      onStarted: () => {
        everything = true;
        schedule();
      },
      onData: ({ data }) => {
        changed.add(data.workItemId);
        schedule();
      },
      onError,
    });
    return () => {
      clearTimeout(timer);
      subscription.unsubscribe();
    };
  }, [client, queryClient, onError, projectId]);
}
