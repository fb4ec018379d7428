import { z } from "zod";
import { createWebhook, deleteWebhook, queueTestDelivery } from "../../integrations/webhooks/operations";
import { listDeliveries, listWebhooks } from "../../integrations/webhooks/queries";
import { rolesProcedure, router } from "../init";
import { limit, projectId, safeString, uuid } from "../schemas";

const admin = rolesProcedure();

const webhookUrl = safeString()
  .max(2_000)
  .refine((value) => URL.canParse(value), { message: "url must be an absolute URL" })
  .refine((value) => !URL.canParse(value) || ["http:", "https:"].includes(new URL(value).protocol), {
    message: "url must use http or https",
  });

/** An event type ("attention.requested"), a prefix ("attention.*"), or "*". */
const eventPattern = safeString()
  .max(100)
  .regex(/^(\*|[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?)$/, 'an event type such as "lease.ended", a prefix such as "attention.*", or "*"');

export const webhooksRouter = router({
  create: admin
    .input(
      z.object({
        url: webhookUrl,
        events: z.array(eventPattern).min(1).max(50).default(["*"]),
        format: z.enum(["json", "slack"]).default("json"),
        label: safeString().max(200).optional(),
        projectId: projectId.optional(),
      }),
    )
    .mutation(({ ctx, input }) => createWebhook(ctx.db, input)),
  list: admin.query(({ ctx }) => listWebhooks(ctx.db)),
  delete: admin.input(z.object({ id: uuid })).mutation(({ ctx, input }) => deleteWebhook(ctx.db, input.id)),
  deliveries: admin
    .input(z.object({ webhookId: uuid, limit: limit(200, 50) }))
    .query(({ ctx, input }) => listDeliveries(ctx.db, input)),
  /** Dashboard addition: queue a `webhook.test` delivery ("send a test event"). */
  test: admin.input(z.object({ id: uuid })).mutation(({ ctx, input }) => queueTestDelivery(ctx.db, input.id)),
});
