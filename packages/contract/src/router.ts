import type {
  TRPC_ERROR_CODE_KEY, TRPC_ERROR_CODE_NUMBER, TRPCBuiltRouter, TRPCMutationProcedure, TRPCQueryProcedure, TRPCSubscriptionProcedure,
} from "@trpc/server";
import type { z } from "zod";
import type { Reason } from "./constants";
import type { inputs, InputPath } from "./inputs";
import type { ProcedureOutput, ProcedurePath, WorkGraphEvent } from "./outputs";

/*
 * The router as its clients see it, made from the contract alone: each procedure's kind, input
 * and output. tRPC infers a router's type from its implementation, which a client must not
 * need; server/trpc/root.ts checks at compile time that the server's router is this one.
 */

/** Each procedure's kind: a query is a GET, a mutation a POST, a subscription a Server-Sent Events stream. */
export const PROCEDURE_KINDS = {
  "health.check": "query",
  "workItems.create": "mutation",
  "workItems.get": "query",
  "workItems.list": "query",
  "workItems.queue": "query",
  "workItems.addDependency": "mutation",
  "workItems.removeDependency": "mutation",
  "workItems.move": "mutation",
  "workItems.update": "mutation",
  "workItems.setPriority": "mutation",
  "workItems.cancel": "mutation",
  "workItems.import": "mutation",
  "leases.claim": "mutation",
  "leases.renew": "mutation",
  "leases.release": "mutation",
  "leases.cancel": "mutation",
  "leases.handBack": "mutation",
  "leases.note": "mutation",
  "leases.decompose": "mutation",
  "leases.revoke": "mutation",
  "leases.get": "query",
  "leases.active": "query",
  "leases.recent": "query",
  "leases.history": "query",
  "attention.request": "mutation",
  "attention.resolve": "mutation",
  "attention.list": "query",
  "attention.get": "query",
  "attention.wait": "query",
  "notes.list": "query",
  "events.list": "query",
  "events.stream": "subscription",
  "dashboard.summary": "query",
  "dashboard.unroutable": "query",
  "dashboard.endedLastHour": "query",
  "dashboard.inbox": "query",
  "dashboard.neighbourhood": "query",
  "dashboard.activity": "query",
  "tokens.create": "mutation",
  "tokens.list": "query",
  "tokens.revoke": "mutation",
  "workers.list": "query",
  "workers.drain": "mutation",
  "workers.undrain": "mutation",
  "webhooks.create": "mutation",
  "webhooks.list": "query",
  "webhooks.delete": "mutation",
  "webhooks.deliveries": "query",
  "webhooks.test": "mutation",
  "limits.set": "mutation",
  "limits.delete": "mutation",
  "limits.list": "query",
  "projects.create": "mutation",
  "projects.list": "query",
  "people.list": "query",
  "people.disable": "mutation",
  "people.enable": "mutation",
  "people.me": "query",
  "people.createToken": "mutation",
  "people.tokens": "query",
  "people.revokeToken": "mutation",
} as const satisfies Record<ProcedurePath, "query" | "mutation" | "subscription">;

/** `error.data` of a refusal (docs/api.md "Errors"). */
export interface ApiErrorData {
  code: TRPC_ERROR_CODE_KEY;
  httpStatus: number;
  path?: string;
  stack?: string;
  reason: Reason;
  detail?: Record<string, unknown>;
  /** VALIDATION: the schema's issues, and the same by field. */
  issues?: unknown[];
  zodError?: unknown;
}

/** A refusal's body (`error`). */
export interface ApiErrorShape {
  message: string;
  code: TRPC_ERROR_CODE_NUMBER;
  data: ApiErrorData;
}

/** What procedure `Path` takes: nothing (`void`) when it has no input schema. */
export type ProcedureInputOf<Path extends ProcedurePath> = Path extends InputPath ? z.input<(typeof inputs)[Path]> : void;

type Definition<Path extends ProcedurePath, Output> = { meta: unknown; input: ProcedureInputOf<Path>; output: Output; errorShape: ApiErrorShape };
type ProcedureOf<Path extends ProcedurePath> = {
  query: TRPCQueryProcedure<Definition<Path, ProcedureOutput<Path>>>;
  mutation: TRPCMutationProcedure<Definition<Path, ProcedureOutput<Path>>>;
  // Each message carries its id (the event's sequence, the SSE id a reconnect resumes from) and the event.
  subscription: TRPCSubscriptionProcedure<Definition<Path, AsyncIterable<{ id: string; data: WorkGraphEvent }>>>;
}[(typeof PROCEDURE_KINDS)[Path]];

type Noun<Path> = Path extends `${infer Name}.${string}` ? Name : never;
type ApiRecord = {
  [Name in Noun<ProcedurePath>]: { [Path in ProcedurePath as Path extends `${Name}.${infer Verb}` ? Verb : never]: ProcedureOf<Path> };
};

/** The API's router type for tRPC clients (`createTRPCClient<ApiRouter>`): the contract's procedures, no server code. */
export type ApiRouter = TRPCBuiltRouter<{ ctx: object; meta: object; errorShape: ApiErrorShape; transformer: false }, ApiRecord>;