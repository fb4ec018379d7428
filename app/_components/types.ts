import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/trpc/root";

export type Outputs = inferRouterOutputs<AppRouter>;
export type Inputs = inferRouterInputs<AppRouter>;
export type ActiveLease = Outputs["leases"]["active"][number];
export type EndedLease = Outputs["leases"]["recent"][number];
export type WorkItem = Outputs["workItems"]["get"];
export type Lease = Outputs["leases"]["get"];
export type InboxEntry = Outputs["dashboard"]["inbox"][number];
export type Neighbourhood = Outputs["dashboard"]["neighbourhood"];
export type WaitingOn = Neighbourhood["waitingOn"][number];
export type Stage = WorkItem["stage"];
export { isTerminalStage, STAGES } from "@/server/domain/contract";
