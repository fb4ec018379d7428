import { createCallerFactory, router } from "./init";
import { attentionRouter } from "./routers/attention";
import { healthRouter } from "./routers/health";
import { leasesRouter } from "./routers/leases";
import { dashboardRouter, eventsRouter, notesRouter, tokensRouter } from "./routers/misc";
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
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
