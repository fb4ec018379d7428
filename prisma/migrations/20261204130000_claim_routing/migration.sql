-- The claim filters its index walk with `requires <@ capabilities` (rule 13). With element
-- statistics on `requires` (ANALYZE's most common elements and their histogram), planning the
-- claim statement estimated that containment for each of its probes: 3–4.5 ms per claim in
-- bind, on a graph whose items need 0–2 of 10 capabilities (BENCHMARKS.md), three times the
-- whole plain claim. No plan depends on that estimate (claims walk the claim index in queue
-- order and stop at the first match), so the column keeps no statistics.
ALTER TABLE "work_items" ALTER COLUMN "requires" SET STATISTICS 0;

-- A claim for one project (leases.claim's projectId, or a token scoped to one project) walks
-- that project's claimable items in claim order instead of stepping over every other
-- project's (with 20 projects, one matching item in 20 on the plain claim index, each a heap
-- visit). Like work_items_claim_unleased_idx, claims and releases add no entries here.
CREATE INDEX "work_items_claim_unleased_project_idx" ON "work_items"("project_id", "priority" DESC, "created_at", "id")
    WHERE "status" = 'open' AND "open_dependency_count" = 0 AND "ancestor_dependency_count" = 0
      AND "open_child_count" = 0 AND "blocking_attention_count" = 0 AND "lease_expires_at" IS NULL;
