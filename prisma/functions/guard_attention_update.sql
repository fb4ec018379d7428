CREATE OR REPLACE FUNCTION "guard_attention_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."status" = 'resolved' THEN
        RAISE EXCEPTION 'attention request % is resolved and immutable', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    IF NEW."id" IS DISTINCT FROM OLD."id" OR NEW."work_item_id" IS DISTINCT FROM OLD."work_item_id"
       OR NEW."lease_id" IS DISTINCT FROM OLD."lease_id" OR NEW."worker_id" IS DISTINCT FROM OLD."worker_id"
       OR NEW."kind" IS DISTINCT FROM OLD."kind" OR NEW."question" IS DISTINCT FROM OLD."question"
       OR NEW."context" IS DISTINCT FROM OLD."context" OR NEW."options" IS DISTINCT FROM OLD."options"
       OR NEW."blocking" IS DISTINCT FROM OLD."blocking" OR NEW."created_at" IS DISTINCT FROM OLD."created_at" THEN
        RAISE EXCEPTION 'attention request % may only be resolved', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;
