-- dashboard.activity counts lease ends by outcome (released, expired, revoked) per interval.
-- The outcome lives in the event's data, so events_type_created_at_idx alone sends every
-- counted lease end to the heap. One small partial index per counted outcome makes each count
-- an index-only range scan; an insert pays for one of them only when it is such a lease end.
-- Partial indexes exist only here: schema.prisma cannot express them.
CREATE INDEX "events_released_created_at_idx" ON "events"("created_at") WHERE "type" = 'lease.ended' AND "data"->>'outcome' = 'released';
CREATE INDEX "events_expired_created_at_idx" ON "events"("created_at") WHERE "type" = 'lease.ended' AND "data"->>'outcome' = 'expired';
CREATE INDEX "events_revoked_created_at_idx" ON "events"("created_at") WHERE "type" = 'lease.ended' AND "data"->>'outcome' = 'revoked';
