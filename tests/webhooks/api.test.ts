import type pg from "pg";
import { describe, expect } from "vitest";
import { callerAs } from "../support/app";
import { refusal, databaseTest } from "../support/fixtures";

const it = databaseTest();

const errorOf = (error: unknown) => (error as { data?: { reason?: string; code?: string; httpStatus?: number } }).data;
const webhookCount = async (sql: pg.Client) => (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM webhooks")).rows[0]!.n;

describe("webhooks API", () => {
  it("is for admins only: agents and operators get FORBIDDEN for every procedure", async ({ database }) => {
    const admin = await callerAs(database.instance, "admin");
    const hook = await admin.api.webhooks.create({ url: "https://example.com/hook" });
    for (const [role, workerId] of [["agent", "a-1"], ["operator", undefined]] as const) {
      const { api } = await callerAs(database.instance, role, workerId);
      for (const call of [
        api.webhooks.create({ url: "https://example.com/other" }),
        api.webhooks.list(),
        api.webhooks.delete({ id: hook.id }),
        api.webhooks.deliveries({ webhookId: hook.id }),
        api.webhooks.test({ id: hook.id }),
      ]) {
        expect((await refusal(call)).reason).toBe("FORBIDDEN");
      }
    }
    expect((await admin.api.webhooks.list()).map((w) => w.id)).toEqual([hook.id]);
    await admin.api.webhooks.delete({ id: hook.id });
  });

  it("refuses bad URLs and event patterns over HTTP with VALIDATION (400), creating nothing", async ({ database, server, sql }) => {
    const { token } = await callerAs(database.instance, "admin");
    const client = server.client(token);
    const before = await webhookCount(sql);
    for (const input of [
      { url: "ftp://example.com/hook" },
      { url: "javascript:alert(1)" },
      { url: "file:///etc/passwd" },
      { url: "not a url" },
      { url: "/relative/path" },
      { url: "" },
      { url: `https://example.com/${"a".repeat(3_000)}` },
      { url: "https://example.com", events: [] },
      { url: "https://example.com", events: ["attention*"] },
      { url: "https://example.com", events: ["Lease.Ended"] },
      { url: "https://example.com", format: "xml" },
      { url: 42 },
    ]) {
      const error = await client.webhooks.create.mutate(input as never).then(() => null, (e: unknown) => e);
      expect(errorOf(error), JSON.stringify(input)).toMatchObject({ reason: "VALIDATION", code: "BAD_REQUEST", httpStatus: 400 });
    }
    expect(await webhookCount(sql)).toBe(before);
    const tooMany = await client.webhooks.deliveries.query({ webhookId: "00000000-0000-4000-8000-000000000000", limit: 201 }).catch((e: unknown) => e);
    expect(errorOf(tooMany)).toMatchObject({ reason: "VALIDATION" });
  });

  it("shows the secret once, keeps it only encrypted, and answers the documented shapes", async ({ database, sql, server }) => {
    const { token } = await callerAs(database.instance, "admin");
    const client = server.client(token);
    const created = await client.webhooks.create.mutate({ url: "http://127.0.0.1:9/slack", events: ["attention.*", "lease.ended"], format: "slack", label: "team channel" });
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: "http://127.0.0.1:9/slack",
      events: ["attention.*", "lease.ended"],
      format: "slack",
      label: "team channel",
      createdAt: expect.stringMatching(/Z$/),
      lastDeliveredAt: null,
      failing: false,
      lastError: null,
      secret: expect.stringMatching(/^whsec_/),
    });
    const defaults = await client.webhooks.create.mutate({ url: "https://example.com/json" });
    expect(defaults).toMatchObject({ events: ["*"], format: "json", label: null });

    const listed = await client.webhooks.list.query();
    expect(listed.map((w) => w.id)).toEqual([created.id, defaults.id]);
    expect(JSON.stringify(listed)).not.toContain("whsec_");
    const { secret: _secret, ...withoutSecret } = created;
    expect(listed[0]).toEqual(withoutSecret);

    const { rows } = await sql.query<{ row: string }>("SELECT row_to_json(w)::text AS row FROM webhooks w WHERE id = $1", [created.id]);
    expect(rows[0]!.row).not.toContain(created.secret);
    expect(rows[0]!.row).not.toContain(created.secret.slice(6));

    expect(await client.webhooks.deliveries.query({ webhookId: created.id })).toEqual([]);
    expect(await client.webhooks.delete.mutate({ id: created.id })).toEqual({ id: created.id });
    // One call at a time: a call made up front would reject before anything listens to it.
    for (const call of [
      () => client.webhooks.delete.mutate({ id: created.id }),
      () => client.webhooks.deliveries.query({ webhookId: created.id }),
      () => client.webhooks.test.mutate({ id: created.id }),
    ]) {
      expect(errorOf(await call().catch((e: unknown) => e))).toMatchObject({ reason: "NOT_FOUND" });
    }
    expect((await client.webhooks.list.query()).map((w) => w.id)).toEqual([defaults.id]);
  });
});
