/**
 * When the outbox tries a failed delivery again (webhooks, the Slack app, GitHub progress):
 * `firstDelaySeconds` after the first failed attempt, doubling with each further one, at most
 * `maxDelaySeconds` apart, until `giveUpAfterSeconds` after the delivery was created; then it
 * is `failed`.
 */
export interface RetryPolicy {
  firstDelaySeconds: number;
  maxDelaySeconds: number;
  giveUpAfterSeconds: number;
}

/** 2 s, 4 s, 8 s, … at most 10 min apart, for 24 h (docs/webhooks.md). */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { firstDelaySeconds: 2, maxDelaySeconds: 600, giveUpAfterSeconds: 24 * 3600 };
