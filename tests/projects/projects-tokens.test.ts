import { describe, expect } from "vitest";
import { databaseTest, refusal } from "../support/fixtures";
import { scopedCaller } from "./support";

/* projects.create/list, token scopes and capabilities (docs/api.md "Queue policy", rule 12). */

const it = databaseTest({ scope: "test" });

describe("projects", () => {
  it("an admin creates a project once; everyone lists the projects they may see, by id", async ({ database, people }) => {
    const created = await people.admin.projects.create({ id: "web", name: "Web" });
    expect(created).toMatchObject({ id: "web", name: "Web" });
    expect(Date.parse(created.createdAt)).not.toBeNaN();
    await people.admin.projects.create({ id: "api", name: "API" });
    expect((await refusal(people.admin.projects.create({ id: "web", name: "Again" }))).reason).toBe("DUPLICATE");
    await expect(people.admin.projects.create({ id: "Bad_Id", name: "x" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect((await refusal(people.operator.projects.create({ id: "ops", name: "Ops" }))).reason).toBe("FORBIDDEN");

    expect((await people.operator.projects.list()).map((p) => p.id)).toEqual(["api", "default", "web"]);
    const scoped = await scopedCaller(database.instance, people, { role: "operator", projects: ["web"] });
    expect(await scoped.projects.list()).toEqual([created]);
  });
});

describe("tokens.create scopes and capabilities", () => {
  it("stores projects and an agent's capabilities (sorted, unique) and lists them", async ({ people }) => {
    await people.admin.projects.create({ id: "web", name: "Web" });
    const { id } = await people.admin.tokens.create({ role: "agent", workerId: "w-caps", projects: ["web"], capabilities: ["gpu", "browser", "gpu"] });
    const listed = (await people.admin.tokens.list()).find((token) => token.id === id)!;
    expect(listed).toMatchObject({ projects: ["web"], capabilities: ["browser", "gpu"] });
    const unscoped = (await people.admin.tokens.list()).find((token) => token.role === "operator")!;
    expect(unscoped).toMatchObject({ projects: [], capabilities: [] });
  });

  it("refuses an unknown project, a scoped admin token, capabilities on a non-agent token and a bad capability", async ({ people }) => {
    expect(await refusal(people.admin.tokens.create({ role: "operator", projects: ["nope"] }))).toMatchObject({ reason: "NOT_FOUND", detail: { id: "nope" } });
    expect((await refusal(people.admin.tokens.create({ role: "admin", projects: ["default"] }))).reason).toBe("VALIDATION");
    expect((await refusal(people.admin.tokens.create({ role: "operator", capabilities: ["gpu"] }))).reason).toBe("VALIDATION");
    await expect(people.admin.tokens.create({ role: "agent", workerId: "w", capabilities: ["Not OK"] })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect((await people.admin.tokens.list()).filter((token) => token.label === null)).toEqual([]);
  });

  it("workers.list shows the union of a worker's unrevoked agent tokens' capabilities", async ({ people }) => {
    await people.admin.tokens.create({ role: "agent", workerId: "w-union", capabilities: ["gpu"] });
    const second = await people.admin.tokens.create({ role: "agent", workerId: "w-union", capabilities: ["browser", "lang:go"] });
    const revoked = await people.admin.tokens.create({ role: "agent", workerId: "w-union", capabilities: ["prod"] });
    await people.admin.tokens.revoke({ id: revoked.id });
    const worker = (await people.operator.workers.list()).find((w) => w.workerId === "w-union")!;
    expect(worker.capabilities).toEqual(["browser", "gpu", "lang:go"]);
    await people.admin.tokens.revoke({ id: second.id });
    expect((await people.operator.workers.list()).find((w) => w.workerId === "w-union")!.capabilities).toEqual(["gpu"]);
  });
});
