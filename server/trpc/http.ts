import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import type { Db } from "../db";
import { createContext } from "./init";
import { appRouter } from "./root";

/** The one HTTP entry point: Next's route handler and the test server both call it. */
export function handleTrpcRequest(db: Db, request: Request, onError?: (error: unknown) => void): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req: request,
    router: appRouter,
    createContext: () => createContext(db, { headers: request.headers, method: request.method }),
    onError: ({ error }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") (onError ?? console.error)(error.cause ?? error);
    },
  });
}
