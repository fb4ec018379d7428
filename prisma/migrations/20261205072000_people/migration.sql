-- People (issue 25): who signed in with the team's identity provider, keyed by the provider's
-- (issuer, subject). `actor` is what their actions record as Event.actor (person:<email or subject>).
CREATE TABLE "people" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "issuer" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "email" TEXT,
    "name" TEXT,
    "actor" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "last_seen_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "disabled_at" TIMESTAMPTZ(6),

    CONSTRAINT "people_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "people_role_check" CHECK ("role" IN ('operator', 'admin'))
);

CREATE UNIQUE INDEX "people_issuer_subject_key" ON "people"("issuer", "subject");
CREATE INDEX "people_actor_idx" ON "people"("actor");

-- A sign-in under way: the state's hash, the PKCE verifier and the nonce, used once.
CREATE TABLE "oidc_logins" (
    "state_hash" TEXT NOT NULL,
    "code_verifier" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "oidc_logins_pkey" PRIMARY KEY ("state_hash")
);

CREATE INDEX "oidc_logins_expires_at_idx" ON "oidc_logins"("expires_at");

-- A person's own tokens (for their CLI): their actions are attributed to them.
ALTER TABLE "api_tokens" ADD COLUMN "person_id" UUID;
CREATE INDEX "api_tokens_person_id_idx" ON "api_tokens"("person_id");
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_person_id_fkey" FOREIGN KEY ("person_id") REFERENCES "people"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- A dashboard session belongs to a token (token login) or to a person (sign-in), never both.
ALTER TABLE "dashboard_sessions" ALTER COLUMN "token_id" DROP NOT NULL;
ALTER TABLE "dashboard_sessions" ADD COLUMN "person_id" UUID;
CREATE INDEX "dashboard_sessions_person_id_idx" ON "dashboard_sessions"("person_id");
ALTER TABLE "dashboard_sessions" ADD CONSTRAINT "dashboard_sessions_person_id_fkey" FOREIGN KEY ("person_id") REFERENCES "people"("id") ON DELETE CASCADE ON UPDATE RESTRICT;
ALTER TABLE "dashboard_sessions" ADD CONSTRAINT "dashboard_sessions_one_owner" CHECK (num_nonnulls("token_id", "person_id") = 1);

ALTER TABLE "attention_requests" ADD COLUMN "resolved_by_name" TEXT;
