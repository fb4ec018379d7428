import { LogLevel, WebClient } from "@slack/web-api";
import type { SlackSettings } from "../../config";

/** Longest a Slack Web API call may take (the same bound as a webhook delivery). */
const SLACK_CALL_TIMEOUT_MS = 10_000;

export interface SlackApp {
  client: WebClient;
  settings: SlackSettings;
}

/**
 * Slack's own Web API client on the configured base URL. It never retries or waits out a rate
 * limit by itself: the outbox retries a failed post or update with its backoff, and an
 * interaction's calls are made once, right after the acknowledgement.
 */
export function slackApp(settings: SlackSettings): SlackApp {
  const client = new WebClient(settings.botToken, {
    slackApiUrl: settings.apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: SLACK_CALL_TIMEOUT_MS,
    logLevel: LogLevel.ERROR,
  });
  return { client, settings };
}

/** Who answered from Slack. */
export interface SlackResponder {
  /** Recorded as resolvedBy: `slack:<user id>`. */
  actor: string;
  /** The Slack profile's display name (else real name, else the user name the interaction carried). */
  name: string;
  /** The profile's email when the app may read it (users:read.email), to recognise a known person. */
  email: string | null;
}

/**
 * The one place a Slack user becomes an actor: users.info gives the profile's name and email.
 * When Slack cannot be asked, the interaction's own user name stands in and the email is unknown.
 */
export async function slackResponder(client: WebClient, user: { id: string; name?: string }): Promise<SlackResponder> {
  const actor = `slack:${user.id}`;
  try {
    const { user: info } = await client.users.info({ user: user.id });
    const profile = info?.profile;
    return {
      actor,
      name: profile?.display_name || profile?.real_name || info?.real_name || info?.name || user.name || user.id,
      email: profile?.email ?? null,
    };
  } catch {
    return { actor, name: user.name ?? user.id, email: null };
  }
}
