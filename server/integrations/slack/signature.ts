import { createHmac, timingSafeEqual } from "node:crypto";

/** Slack's window: a request signed more than this far from now is refused (a replay). */
export const SIGNATURE_WINDOW_SECONDS = 300;

/**
 * Slack's request signature (https://api.slack.com/authentication/verifying-requests-from-slack):
 * `X-Slack-Signature` is `v0=` + hex HMAC-SHA256, keyed with the signing secret, of
 * `v0:<X-Slack-Request-Timestamp>:<raw body>`; compared in constant time, and only for a
 * timestamp within 300 s of `nowSeconds` (the database clock).
 */
export function slackSignatureIsValid(
  signingSecret: string,
  headers: { timestamp: string | null; signature: string | null },
  rawBody: Buffer,
  nowSeconds: number,
): boolean {
  const { timestamp, signature } = headers;
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || !signature) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) return false;
  const expected = Buffer.from(`v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest("hex")}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
