-- Server-side dashboard sessions (issue 10.6). The cookie carries only a random session id;
-- the database keeps its SHA-256, the token it stands for and an expiry on the database
-- clock. Revoking a token deletes its sessions (and authentication also checks the token).
CREATE TABLE "dashboard_sessions" (
    "id_hash"    TEXT NOT NULL,
    "token_id"   UUID NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    CONSTRAINT "dashboard_sessions_pkey" PRIMARY KEY ("id_hash"),
    CONSTRAINT "dashboard_sessions_expiry_after_creation" CHECK ("expires_at" > "created_at")
);
CREATE INDEX "dashboard_sessions_token_id_idx" ON "dashboard_sessions"("token_id");
CREATE INDEX "dashboard_sessions_expires_at_idx" ON "dashboard_sessions"("expires_at");
ALTER TABLE "dashboard_sessions" ADD CONSTRAINT "dashboard_sessions_token_id_fkey"
    FOREIGN KEY ("token_id") REFERENCES "api_tokens"("id") ON DELETE CASCADE ON UPDATE RESTRICT;
