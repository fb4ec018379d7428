import { inputs } from "@work-graph/contract";
import { createWebhook, deleteWebhook, queueTestDelivery } from "../../integrations/webhooks/operations";
import { listDeliveries, listWebhooks } from "../../integrations/webhooks/queries";
import { rolesProcedure, router } from "../init";

const admin = rolesProcedure();

export const webhooksRouter = router({
  create: admin
    .input(inputs["webhooks.create"])
    .mutation(({ ctx, input }) => createWebhook(ctx.db, input)),
  list: admin.query(({ ctx }) => listWebhooks(ctx.db)),
  delete: admin.input(inputs["webhooks.delete"]).mutation(({ ctx, input }) => deleteWebhook(ctx.db, input.id)),
  deliveries: admin
    .input(inputs["webhooks.deliveries"])
    .query(({ ctx, input }) => listDeliveries(ctx.db, input)),
  /** Dashboard addition: queue a `webhook.test` delivery ("send a test event"). */
  test: admin.input(inputs["webhooks.test"]).mutation(({ ctx, input }) => queueTestDelivery(ctx.db, input.id)),
});
