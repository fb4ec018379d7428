import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { ApiRouter } from "@work-graph/contract";

export type Outputs = inferRouterOutputs<ApiRouter>;
export type Inputs = inferRouterInputs<ApiRouter>;
export type ActiveLease = Outputs["leases"]["active"][number];
export type EndedLease = Outputs["leases"]["recent"][number];
export type WorkItem = Outputs["workItems"]["get"];
export type Lease = Outputs["leases"]["get"];
export type InboxEntry = Outputs["dashboard"]["inbox"][number];
export type Neighbourhood = Outputs["dashboard"]["neighbourhood"];
export type WaitingOn = Neighbourhood["waitingOn"][number];
export type Stage = WorkItem["stage"];
export { isTerminalStage, STAGES } from "@work-graph/contract";
