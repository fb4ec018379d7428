-- The claim walks ready items without a lease (server/domain/readiness.ts UNLEASED_READY_SQL):
-- the claim index also lists the items under live leases, and a claim stepped over every one of
-- them (10,000 at 100k open items in the benchmark: 4.4 ms per claim instead of 1.4). Claims and
-- releases add no entries here: a leased or finished item is not in it.
CREATE INDEX "work_items_claim_unleased_idx" ON "work_items"("priority" DESC, "created_at", "id")
    WHERE "status" = 'open' AND "open_dependency_count" = 0 AND "ancestor_dependency_count" = 0
      AND "open_child_count" = 0 AND "blocking_attention_count" = 0 AND "lease_expires_at" IS NULL;
