"use client";

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import { CSRF_HEADER, type ApiRouter } from "@work-graph/contract";
import { POLL_MS } from "./constants";
import { useLiveUpdates } from "./live-updates";
import { useProjectId } from "./project";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<ApiRouter>();

/** reason / code / message of a failed tRPC call (API.md "Errors"). */
export function describeError(error: unknown): { reason: string; message: string; code?: string } {
  if (error instanceof TRPCClientError) {
    const data = error.data as { reason?: string; code?: string } | undefined;
    return { reason: data?.reason ?? data?.code ?? "ERROR", message: error.message, code: data?.code };
  }
  return { reason: "ERROR", message: error instanceof Error ? error.message : String(error) };
}

function isUnauthenticated(error: unknown): boolean {
  return describeError(error).code === "UNAUTHORIZED";
}

/** A revoked or expired session: back to the login page. */
function onAuthError(error: unknown) {
  if (isUnauthenticated(error) && typeof window !== "undefined" && window.location.pathname !== "/login") {
    window.location.assign("/login");
  }
}

function makeQueryClient() {
  return new QueryClient({
    queryCache: new QueryCache({ onError: onAuthError }),
    mutationCache: new MutationCache({ onError: onAuthError }),
    defaultOptions: {
      queries: {
        // Live through events.stream (live-updates.ts); this slow poll is only the fallback.
        refetchInterval: POLL_MS,
        staleTime: 1_000,
        // 4xx answers (not found, bad input) will not change by asking again.
        retry: (failures, error) => failures < 2 && !/^(BAD_REQUEST|UNAUTHORIZED|FORBIDDEN|NOT_FOUND)$/.test(describeError(error).code ?? ""),
      },
    },
  });
}

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(() =>
    createTRPCClient<ApiRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === "subscription",
          // Server-Sent Events (EventSource): same origin, so the session cookie authenticates it; it reconnects with Last-Event-ID.
          true: httpSubscriptionLink({ url: "/api/trpc" }),
          false: httpBatchLink({
            url: "/api/trpc",
            // The server refuses batches over WORK_GRAPH_MAX_BATCH (default 20) calls.
            maxItems: 10,
            // The session cookie travels by itself (same origin); this header marks the call as the dashboard's own.
            headers: () => ({ [CSRF_HEADER]: "1" }),
          }),
        }),
      ],
    }),
  );
  useLiveUpdates(trpcClient, queryClient, onAuthError, useProjectId());
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
