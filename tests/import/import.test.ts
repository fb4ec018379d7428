import type pg from "pg";
import { describe, expect } from "vitest";
import { databaseTest, refusal } from "../support/fixtures";
import { scopedCaller } from "../projects/support";

/* workItems.import (docs/api.md "Import"): every rule, each refusal naming its item and writing nothing. */

const it = databaseTest();

async function counts(sql: pg.Client) {
  const { rows } = await sql.query<{ items: number; events: number; edges: number }>(
    `SELECT (SELECT count(*) FROM work_items)::int AS items, (SELECT count(*) FROM events)::int AS events,
            (SELECT count(*) FROM dependencies)::int AS edges`,
  );
  return rows[0]!;
}

/** Fifty good items (a chain of dependencies under one parent), with one item replaced by `bad` at `at`. */
function fiftyWith(prefix: string, bad?: Record<string, unknown>, at = 37) {
  const items: Record<string, unknown>[] = [{ ref: "root", id: `${prefix}-root`, title: "Root" }];
  for (let n = 1; n < 50; n++) items.push({ ref: `r${n}`, title: `Step ${n}`, parent: "root", dependsOn: n > 1 ? [`r${n - 1}`] : [] });
  if (bad) items[at] = { ref: `r${at}`, title: `Step ${at}`, ...bad };
  return items;
}

describe("workItems.import", () => {
  it("creates refs, children and dependencies on refs and existing ids, in input order, with readiness counted", async ({ people, sql }) => {
    await people.operator.workItems.create({ id: "ext-blocker", title: "Existing blocker" });
    await people.operator.workItems.create({ id: "ext-parent", title: "Existing parent", priority: 4, requires: ["gpu"] });
    const result = await people.operator.workItems.import({
      items: [
        { ref: "b", title: "B", parent: "a", dependsOn: ["c"] },
        { ref: "a", id: "imp-a", title: "A", dependsOn: ["ext-blocker"], priority: 2 },
        { ref: "c", title: "C" },
        { ref: "d", title: "D", parent: "ext-parent" },
      ],
    });
    expect(result.created.map((item) => item.title)).toEqual(["B", "A", "C", "D"]);
    expect(result.existing).toEqual([]);
    expect(result.refs.a).toBe("imp-a");
    const byTitle = Object.fromEntries(result.created.map((item) => [item.title, item]));
    expect(byTitle.A).toMatchObject({ stage: "waiting_on_children", dependsOn: ["ext-blocker"], openChildCount: 1, priority: 2 });
    expect(byTitle.B).toMatchObject({ parentId: "imp-a", stage: "blocked", dependsOn: [result.refs.c], priority: 2 });
    expect(byTitle.C).toMatchObject({ stage: "ready", parentId: null, priority: 0 });
    expect(byTitle.D).toMatchObject({ parentId: "ext-parent", priority: 4, requires: ["gpu"], stage: "ready" });
    expect(await people.operator.workItems.get({ id: "ext-parent" })).toMatchObject({ openChildCount: 1, stage: "waiting_on_children" });

    // Readiness stays true to the counters: releasing the blockers readies B.
    const worker = await people.agent("imp-worker");
    for (const id of ["ext-blocker", result.refs.c!]) {
      const { lease } = (await worker.leases.claim({ workItemId: id }))!;
      await worker.leases.release({ leaseId: lease.id, epoch: lease.epoch, evidence: "done" });
    }
    expect((await people.operator.workItems.get({ id: result.refs.b! })).stage).toBe("ready");
    const { rows } = await sql.query("SELECT count(DISTINCT xmin::text)::int AS n FROM events WHERE type = 'work_item.created' AND work_item_id = ANY($1)", [Object.values(result.refs)]);
    expect(rows[0].n).toBe(1);
  });

  it("queue policy like workItems.create: project, requires and key inherited, notBefore and delaySeconds", async ({ people }) => {
    await people.admin.projects.create({ id: "imp-proj", name: "Import" });
    const result = await people.operator.workItems.import({
      projectId: "imp-proj",
      items: [
        { ref: "p", title: "P", requires: ["gpu", "browser", "gpu"], concurrencyKey: "db" },
        { ref: "c1", title: "C1", parent: "p" },
        { ref: "c2", title: "C2", parent: "p", requires: [], concurrencyKey: null, notBefore: "2099-01-01T01:00:00+01:00" },
        { ref: "later", title: "Later", delaySeconds: 3600 },
      ],
    });
    const [p, c1, c2, later] = result.created;
    expect(p).toMatchObject({ projectId: "imp-proj", requires: ["browser", "gpu"], concurrencyKey: "db" });
    expect(c1).toMatchObject({ projectId: "imp-proj", requires: ["browser", "gpu"], concurrencyKey: "db" });
    expect(c2).toMatchObject({ requires: [], concurrencyKey: null, notBefore: "2099-01-01T00:00:00.000Z", stage: "scheduled" });
    expect(later!.stage).toBe("scheduled");
  });

  describe("refusals name the item and write nothing (50 items, rows and events counted)", () => {
    const cases: [string, Record<string, unknown> | ((prefix: string) => Record<string, unknown>[]), string][] = [
      ["unknown parent ref or id", { parent: "nowhere" }, "NOT_FOUND"],
      ["unknown dependency", { dependsOn: ["r1", "no-such-item"] }, "NOT_FOUND"],
      ["both time gates", { notBefore: "2099-01-01T00:00:00Z", delaySeconds: 5 }, "VALIDATION"],
      ["a bad field", { priority: "high" }, "VALIDATION"],
      ["a blank title", { title: "  " }, "VALIDATION"],
      ["a taken id", { id: "taken" }, "DUPLICATE"],
      ["an id given twice", { id: "twice-1" }, "DUPLICATE"],
      ["a self-dependency", { dependsOn: ["r37"] }, "DEPENDENCY_CYCLE"],
      ["a cycle among the new items", { dependsOn: ["r40"] }, "DEPENDENCY_CYCLE"],
      ["a child of an item that depends on it", { parent: "r38" }, "DEPENDENCY_CYCLE"],
      ["a cycle through existing items", { parent: "cyc-parent", dependsOn: ["cyc-blocked"] }, "DEPENDENCY_CYCLE"],
      ["a terminal parent", { parent: "closed-parent" }, "ALREADY_TERMINAL"],
      ["an externalId given twice", (prefix) => {
        const items = fiftyWith(prefix);
        items[10] = { ...items[10], externalId: "same" };
        items[37] = { ...items[37], externalId: "same" };
        return items;
      }, "DUPLICATE"],
      ["a ref given twice", (prefix) => {
        const items = fiftyWith(prefix);
        items[10] = { ...items[10], ref: "r37" };
        return items;
      }, "VALIDATION"],
      ["a parent loop", (prefix) => {
        const items = fiftyWith(prefix);
        items[37] = { ref: "r37", title: "Loop A", parent: "r38" };
        items[38] = { ref: "r38", title: "Loop B", parent: "r37" };
        return items;
      }, "DEPENDENCY_CYCLE"],
      ["a parent loop reached first from an earlier item outside it", (prefix) => {
        const items = fiftyWith(prefix);
        items[10] = { ref: "r10", title: "Leads into the loop", parent: "r37" };
        items[37] = { ref: "r37", title: "Loop A", parent: "r38" };
        items[38] = { ref: "r38", title: "Loop B", parent: "r37" };
        return items;
      }, "DEPENDENCY_CYCLE"],
    ];
    let round = 0;
    for (const [name, bad, reason] of cases) {
      it(name, async ({ people, sql }) => {
        if (round === 0) {
          await people.operator.workItems.create({ id: "taken", title: "Taken" });
          // cyc-blocked waits for cyc-parent's children: a new child of cyc-parent that waits for cyc-blocked closes a loop.
          await people.operator.workItems.create({ id: "cyc-parent", title: "Cycle parent" });
          await people.operator.workItems.create({ id: "cyc-blocked", title: "Cycle blocked", dependsOn: ["cyc-parent"] });
          await people.operator.workItems.create({ id: "closed-parent", title: "Closed" });
          await people.operator.workItems.cancel({ id: "closed-parent", reason: "gone" });
        }
        const prefix = `f${round++}`;
        let items = typeof bad === "function" ? bad(prefix) : fiftyWith(prefix, bad);
        if (name === "an id given twice") items = items.map((item, index) => (index === 12 ? { ...item, id: "twice-1" } : item));
        const before = await counts(sql);
        const refused = await refusal(people.operator.workItems.import({ items: items as never }));
        expect(refused).toMatchObject({ reason, detail: { ref: "r37" } });
        expect(await counts(sql)).toEqual(before);
      });
    }
  });

  it("a dry run validates the same way, answers what it would create, and writes nothing", async ({ people, sql }) => {
    const before = await counts(sql);
    const dry = await people.operator.workItems.import({ dryRun: true, items: fiftyWith("dry") as never });
    expect(dry.created).toHaveLength(50);
    expect(dry.created[1]).toMatchObject({ parentId: "dry-root", stage: "ready" });
    expect(dry.created[2]).toMatchObject({ stage: "blocked", dependsOn: [dry.refs.r1] });
    expect(await counts(sql)).toEqual(before);
    const refused = await refusal(people.operator.workItems.import({ dryRun: true, items: fiftyWith("dry", { parent: "nowhere" }) as never }));
    expect(refused).toMatchObject({ reason: "NOT_FOUND", detail: { ref: "r37" } });
    expect(await counts(sql)).toEqual(before);
  });

  it("externalId makes a re-run create nothing; refs resolve to the existing ids; new items join them", async ({ people, sql }) => {
    const plan = [
      { ref: "epic", title: "Epic", externalId: "plan:epic" },
      { ref: "t1", title: "Task 1", parent: "epic", externalId: "plan:t1" },
      { ref: "t2", title: "Task 2", parent: "epic", dependsOn: ["t1"], externalId: "plan:t2" },
    ];
    const first = await people.operator.workItems.import({ items: plan });
    expect(first.created).toHaveLength(3);
    const before = await counts(sql);
    const again = await people.operator.workItems.import({ items: plan });
    expect(again.created).toEqual([]);
    expect(again.existing).toEqual([
      { ref: "epic", id: first.refs.epic }, { ref: "t1", id: first.refs.t1 }, { ref: "t2", id: first.refs.t2 },
    ]);
    expect(again.refs).toEqual(first.refs);
    expect(await counts(sql)).toEqual(before);

    const grown = await people.operator.workItems.import({ items: [...plan, { ref: "t3", title: "Task 3", parent: "epic", dependsOn: ["t2"], externalId: "plan:t3" }] });
    expect(grown.created.map((item) => item.title)).toEqual(["Task 3"]);
    expect(grown.created[0]).toMatchObject({ parentId: first.refs.epic, dependsOn: [first.refs.t2], stage: "blocked" });
    expect((await people.operator.workItems.get({ id: first.refs.epic! })).openChildCount).toBe(3);
  });

  it("two identical imports racing on their own connections create the plan once", async ({ people, sql }) => {
    const plan = Array.from({ length: 30 }, (_, n) => ({ ref: `race-${n}`, title: `Race ${n}`, externalId: `race:${n}`, dependsOn: n > 0 ? [`race-${n - 1}`] : [] }));
    const [a, b] = await Promise.all([people.operator.workItems.import({ items: plan }), people.operator.workItems.import({ items: plan })]);
    expect([a.created.length, b.created.length].sort()).toEqual([0, 30]);
    expect([a.existing.length, b.existing.length].sort()).toEqual([0, 30]);
    expect(a.refs).toEqual(b.refs);
    const { rows } = await sql.query("SELECT count(*)::int AS n FROM work_items WHERE external_id LIKE 'race:%'");
    expect(rows[0].n).toBe(30);
  });

  it("rule 12: a scoped operator imports only into its projects and names only items it can see", async ({ database, people, sql }) => {
    await people.admin.projects.create({ id: "imp-mine", name: "Mine" });
    await people.admin.projects.create({ id: "imp-other", name: "Other" });
    await people.operator.workItems.create({ id: "hidden-item", title: "Hidden", projectId: "imp-other" });
    const scoped = await scopedCaller(database.instance, people, { role: "operator", projects: ["imp-mine"] });
    const before = await counts(sql);
    expect(await refusal(scoped.workItems.import({ projectId: "imp-other", items: [{ ref: "x", title: "X" }] }))).toMatchObject({ reason: "FORBIDDEN" });
    expect(await refusal(scoped.workItems.import({ projectId: "imp-mine", items: [{ ref: "x", title: "X" }, { ref: "y", title: "Y", dependsOn: ["hidden-item"] }] })))
      .toMatchObject({ reason: "NOT_FOUND", detail: { ref: "y" } });
    expect(await refusal(scoped.workItems.import({ projectId: "imp-mine", items: [{ ref: "z", title: "Z", parent: "hidden-item" }] })))
      .toMatchObject({ reason: "NOT_FOUND", detail: { ref: "z" } });
    expect(await refusal(people.operator.workItems.import({ projectId: "imp-mine", items: [{ ref: "w", title: "W", parent: "hidden-item" }] })))
      .toMatchObject({ reason: "VALIDATION", detail: { ref: "w" } });
    expect(await refusal(people.operator.workItems.import({ projectId: "no-such-project", items: [{ ref: "v", title: "V" }] })))
      .toMatchObject({ reason: "NOT_FOUND" });
    expect(await counts(sql)).toEqual(before);
    const made = await scoped.workItems.import({ projectId: "imp-mine", items: [{ ref: "x", title: "X" }] });
    expect(made.created[0]!.projectId).toBe("imp-mine");
  });

  it("is an operator's (role O): an agent token is refused, writing nothing; the batch is bounded", async ({ people, sql }) => {
    const agent = await people.agent("imp-agent");
    const before = await counts(sql);
    expect(await refusal(agent.workItems.import({ items: [{ ref: "a", title: "A" }, { ref: "b", title: "B", dependsOn: ["a"] }] }))).toMatchObject({ reason: "FORBIDDEN" });
    expect(await counts(sql)).toEqual(before);
    const plan = (count: number) => Array.from({ length: count }, (_, n) => ({ ref: `n${n}`, title: "N" }));
    await expect(people.operator.workItems.import({ items: plan(1001) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(people.operator.workItems.import({ items: [] })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
