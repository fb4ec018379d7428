import pg from "pg";
import { databaseConnectTimeoutMs } from "../config";
import { serverVersion } from "../sql/server-version";

/** The oldest PostgreSQL major the migrations and queries use nothing newer than (API.md "Databases"). */
export const OLDEST_SUPPORTED_MAJOR = 14;

/** Why a server of this version cannot run Work Graph, or null when it can. */
export function unsupportedServerReason(version: { number: number; text: string }): string | null {
  if (version.number >= OLDEST_SUPPORTED_MAJOR * 10_000) return null;
  return `PostgreSQL ${version.text} is not supported: Work Graph needs PostgreSQL ${OLDEST_SUPPORTED_MAJOR} or newer (14 to 18 are tested)`;
}

/** Throws with unsupportedServerReason's message when the server at `url` is older than OLDEST_SUPPORTED_MAJOR. */
export async function refuseUnsupportedServer(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: databaseConnectTimeoutMs() });
  await client.connect();
  try {
    const reason = unsupportedServerReason(await serverVersion(client));
    if (reason) throw new Error(reason);
  } finally {
    await client.end().catch(() => {});
  }
}
