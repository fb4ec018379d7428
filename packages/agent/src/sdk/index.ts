/**
 * Work Graph agent SDK: a typed tRPC client (`createWorkGraphClient`), typed errors
 * (`WorkGraphError`) and a worker loop with automatic lease renewal (`runWorker`).
 * Depends only on `@trpc/client` and zod at run time; the API types, the stage, lease outcome and
 * error reason lists (`STAGES`, `LEASE_OUTCOMES`, `REASONS`) and the queue policy's formats
 * (`CAPABILITY_PATTERN`, `PROJECT_ID_PATTERN`, `DEFAULT_PROJECT`) come from @work-graph/contract,
 * bundled in.
 */
export { apiUrl, createWorkGraphClient } from "./client";
export type {
  AttentionRequestInput, AttentionRequestResult, ClaimInput, ClaimResult, CreateWorkItemInput, DecomposeInput, DecomposeResult,
  FinishResult, HandBackInput, RetryOptions, UpdateWorkItemInput, WorkGraphClient, WorkGraphClientOptions,
} from "./client";
export {
  CAPABILITY_PATTERN, DEFAULT_PROJECT, isTerminalStage, LEASE_OUTCOMES, PROJECT_ID_PATTERN, REASONS, STAGES, TERMINAL_STAGES,
} from "@work-graph/contract";
export type {
  AttentionRequest, EventType, Lease, LeaseOutcome, Limit, Note, Project, Reason, Stage, TerminalStage, WaitingStage, WorkGraphEvent, WorkItem,
} from "@work-graph/contract";
export { API_REASONS, isWorkGraphError, toWorkGraphError, WorkGraphError } from "./errors";
export type { ApiReason, ErrorReason, LeaseNotCurrentKind } from "./errors";
export { runWorker } from "./worker";
export type {
  FinishOutcome, HandlerResult, RunWorkerOptions, ShutdownMode, WorkContext, WorkerEvent, WorkerSummary, WorkHandler,
} from "./worker";
