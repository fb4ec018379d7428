/**
 * Work Graph agent SDK: a typed tRPC client (`createWorkGraphClient`), typed errors
 * (`WorkGraphError`) and a worker loop with automatic lease renewal (`runWorker`).
 * Depends only on `@trpc/client` at run time; the API types come from the server's router, and
 * the stage, lease outcome and error reason lists (`STAGES`, `LEASE_OUTCOMES`, `REASONS`) and the
 * queue policy's formats (`CAPABILITY_PATTERN`, `PROJECT_ID_PATTERN`, `DEFAULT_PROJECT`) from
 * server/domain/contract.ts, a plain constant module bundled in.
 */
export { apiUrl, createWorkGraphClient } from "./client";
export type {
  AttentionRequest, AttentionRequestInput, AttentionRequestResult, ClaimInput, ClaimResult, CreateWorkItemInput, DecomposeInput, DecomposeResult,
  FinishResult, HandBackInput, Lease, Limit, Note, Project, RetryOptions, UpdateWorkItemInput, WorkGraphClient, WorkGraphClientOptions,
  WorkGraphEvent, WorkItem,
} from "./client";
export {
  CAPABILITY_PATTERN, DEFAULT_PROJECT, isTerminalStage, LEASE_OUTCOMES, PROJECT_ID_PATTERN, REASONS, STAGES, TERMINAL_STAGES,
} from "../../../../server/domain/contract";
export type { LeaseOutcome, Reason, Stage, TerminalStage, WaitingStage } from "../../../../server/domain/contract";
export { API_REASONS, isWorkGraphError, toWorkGraphError, WorkGraphError } from "./errors";
export type { ApiReason, ErrorReason, LeaseNotCurrentKind } from "./errors";
export { runWorker } from "./worker";
export type {
  FinishOutcome, HandlerResult, RunWorkerOptions, ShutdownMode, WorkContext, WorkerEvent, WorkerSummary, WorkHandler,
} from "./worker";
