-- Does a webhook's `events` list (exact types, "prefix.*" or "*") take this event type?
CREATE OR REPLACE FUNCTION "webhook_matches"(patterns TEXT[], event_type TEXT) RETURNS BOOLEAN
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT EXISTS (
        SELECT 1 FROM unnest(patterns) AS p
         WHERE p = '*' OR p = event_type
            OR (right(p, 2) = '.*' AND starts_with(event_type, left(p, -1)))
    )
$$;
