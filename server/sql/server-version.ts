import type pg from "pg";

/* Which PostgreSQL the server is (server/database/server-version.ts checks it at start). */

/** `server_version_num` (e.g. 150020) and the server's own version text (e.g. "15.20 (Debian 15.20-0+deb12u1)"). */
export async function serverVersion(client: pg.Client): Promise<{ number: number; text: string }> {
  const { rows } = await client.query<{ number: string; text: string }>(
    "SELECT current_setting('server_version_num') AS number, current_setting('server_version') AS text",
  );
  return { number: Number(rows[0]!.number), text: rows[0]!.text };
}
