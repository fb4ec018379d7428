import type { AnyTRPCProcedure, inferRouterOutputs } from "@trpc/server";
import type { PROCEDURE_KINDS, ProcedureInputOf, ProcedureOutput, ProcedurePath } from "@work-graph/contract";
import { createCallerFactory, router } from "./init";
import { attentionRouter } from "./routers/attention";
import { dashboardRouter } from "./routers/dashboard";
import { eventsRouter } from "./routers/events";
import { healthRouter } from "./routers/health";
import { leasesRouter } from "./routers/leases";
import { limitsRouter } from "./routers/limits";
import { notesRouter } from "./routers/notes";
import { peopleRouter } from "./routers/people";
import { projectsRouter } from "./routers/projects";
import { tokensRouter } from "./routers/tokens";
import { webhooksRouter } from "./routers/webhooks";
import { workItemsRouter } from "./routers/work-items";
import { workersRouter } from "./routers/workers";

export const appRouter = router({
  health: healthRouter,
  workItems: workItemsRouter,
  leases: leasesRouter,
  attention: attentionRouter,
  notes: notesRouter,
  events: eventsRouter,
  dashboard: dashboardRouter,
  tokens: tokensRouter,
  workers: workersRouter,
  webhooks: webhooksRouter,
  limits: limitsRouter,
  projects: projectsRouter,
  people: peopleRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);

/*
 * The contract's router (ApiRouter, what clients are typed with) is this router: the same
 * procedures, each of the same kind, taking the same input and answering what its output
 * schema says (both ways). Fails to compile, naming the procedures, when they disagree.
 */
type Flat<Tree> = UnionToIntersection<{
  [Noun in keyof Tree & string]: { [Verb in keyof Tree[Noun] & string as `${Noun}.${Verb}`]: Tree[Noun][Verb] };
}[keyof Tree & string]>;
type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;
type Procedures = Flat<AppRouter["_def"]["record"]>;
type Outputs = Flat<inferRouterOutputs<AppRouter>>;
type Yielded<Output> = Output extends AsyncIterable<infer Item> ? (Item extends { data: infer Data } ? Data : Item) : Output;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Agrees<Path extends ProcedurePath> = Path extends keyof Procedures & keyof Outputs
  ? Procedures[Path] extends AnyTRPCProcedure
    ? [Same<Procedures[Path]["_def"]["type"], (typeof PROCEDURE_KINDS)[Path]>, Same<Procedures[Path]["_def"]["$types"]["input"], ProcedureInputOf<Path>>, Same<Yielded<Outputs[Path]>, ProcedureOutput<Path>>] extends [true, true, true] ? true : false
    : false
  : false;
type Disagreeing = { [Path in ProcedurePath]: Agrees<Path> extends true ? never : Path }[ProcedurePath] | Exclude<keyof Procedures, ProcedurePath>;
type Assert<Check extends true> = Check;
export type RouterImplementsContract = Assert<[Disagreeing] extends [never] ? true : { disagreeing: Disagreeing }>;
