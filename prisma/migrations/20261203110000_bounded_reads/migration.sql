-- Bounded reads and retention (issue 11 items 5 and 6).

-- workItems.list pages in (created_at, id) order.
CREATE INDEX "work_items_created_at_id_idx" ON "work_items"("created_at", "id");

-- The resolved attention inbox: most recently resolved first.
CREATE INDEX "attention_requests_resolved_idx" ON "attention_requests"("resolved_at" DESC, "id")
    WHERE "status" = 'resolved';

-- The sweeper deletes idempotency receipts older than WORK_GRAPH_IDEMPOTENCY_HOURS.
CREATE INDEX "idempotency_receipts_created_at_idx" ON "idempotency_receipts"("created_at");
