CREATE OR REPLACE FUNCTION "guard_lease_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."ended_at" IS NOT NULL THEN
        RAISE EXCEPTION 'lease % has ended and is immutable', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    IF NEW."id" IS DISTINCT FROM OLD."id" OR NEW."work_item_id" IS DISTINCT FROM OLD."work_item_id"
       OR NEW."worker_id" IS DISTINCT FROM OLD."worker_id" OR NEW."epoch" IS DISTINCT FROM OLD."epoch"
       OR NEW."acquired_at" IS DISTINCT FROM OLD."acquired_at"
       OR NEW."concurrency_key" IS DISTINCT FROM OLD."concurrency_key" THEN
        RAISE EXCEPTION 'lease % identity is immutable', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;
