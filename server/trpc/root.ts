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
