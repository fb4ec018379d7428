-- History is immutable (API.md rule 4).
CREATE OR REPLACE FUNCTION "forbid_history_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'work graph history is immutable: % on % is not allowed', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END $$;
