-- Answering from Slack (API.md v3 "Answering from Slack"): the Slack app posts through the
-- webhook outbox as a webhook of format 'slack_app', and remembers where it posted each
-- attention request so the message can be replaced by the answer.

ALTER TABLE "webhooks" DROP CONSTRAINT "webhooks_format_check",
    ADD CONSTRAINT "webhooks_format_check" CHECK ("format" IN ('json', 'slack', 'slack_app'));
-- One live Slack app webhook: instances starting together create it once (ON CONFLICT).
CREATE UNIQUE INDEX "webhooks_one_slack_app" ON "webhooks" ("format") WHERE "format" = 'slack_app' AND "deleted_at" IS NULL;

CREATE TABLE "slack_messages" (
    "attention_request_id" UUID NOT NULL,
    "channel"              TEXT NOT NULL,
    "ts"                   TEXT NOT NULL,
    "created_at"           TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "slack_messages_pkey" PRIMARY KEY ("attention_request_id")
);
ALTER TABLE "slack_messages" ADD CONSTRAINT "slack_messages_attention_request_id_fkey"
    FOREIGN KEY ("attention_request_id") REFERENCES "attention_requests"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;
