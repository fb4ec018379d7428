import fc from "fast-check";
import { describe, expect } from "vitest";
import type { Stage, WorkItem } from "@work-graph/contract";
import { refused, graphTest } from "./support";

/*
 * Model-based property test of the work graph: random sequences of edits run against the
 * database and against a small in-memory reference of API.md's rules. The database must accept
 * exactly the edits the reference accepts (refusing with one of the reasons the reference finds),
 * and after every edit every item's stage, parent, dependencies and open-child count must match,
 * as must the stored readiness counters behind stage and the claim index (also where a higher
 * stage hides them); after each sequence the queue and a drain by next-claim must take exactly
 * the reference's ready items in queue order.
 */

type Status = "open" | "released" | "cancelled";
interface ModelItem {
  id: string;
  parent: string | null;
  status: Status;
  deps: string[];
  priority: number;
}

class Model {
  readonly items = new Map<string, ModelItem>();

  clone(): Model {
    const copy = new Model();
    for (const item of this.items.values()) copy.items.set(item.id, { ...item, deps: [...item.deps] });
    return copy;
  }

  get(id: string): ModelItem {
    return this.items.get(id)!;
  }

  children(id: string): ModelItem[] {
    return [...this.items.values()].filter((item) => item.parent === id);
  }

  ancestors(id: string): string[] {
    const out: string[] = [];
    for (let parent = this.get(id).parent; parent !== null; parent = this.get(parent).parent) out.push(parent);
    return out;
  }

  descendants(id: string): string[] {
    const out: string[] = [];
    const todo = [id];
    while (todo.length > 0) {
      for (const child of this.children(todo.pop()!)) {
        out.push(child.id);
        todo.push(child.id);
      }
    }
    return out;
  }

  /** The waits-for graph: a parent waits for its children; a dependent and all its descendants wait for the blocker. */
  hasCycle(): boolean {
    const edges = new Map<string, Set<string>>();
    const edge = (from: string, to: string) => {
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    };
    for (const item of this.items.values()) {
      if (item.parent !== null) edge(item.parent, item.id);
      for (const blocker of item.deps) for (const waiter of [item.id, ...this.descendants(item.id)]) edge(waiter, blocker);
    }
    const state = new Map<string, "active" | "done">();
    const visit = (id: string): boolean => {
      if (state.get(id) === "active") return true;
      if (state.get(id) === "done") return false;
      state.set(id, "active");
      for (const next of edges.get(id) ?? []) if (visit(next)) return true;
      state.set(id, "done");
      return false;
    };
    return [...this.items.keys()].some((id) => visit(id));
  }

  stage(id: string): Stage {
    const item = this.get(id);
    if (item.status !== "open") return item.status;
    if (this.children(id).some((child) => child.status === "open")) return "waiting_on_children";
    const open = (blocker: string) => this.get(blocker).status === "open";
    if ([id, ...this.ancestors(id)].some((holder) => this.get(holder).deps.some(open))) return "blocked";
    return "ready";
  }
}

/** Abstract edits; item references are indices taken modulo the number of items at that point. */
type Op =
  | { kind: "create"; parent: number | null; deps: number[]; priority: number }
  | { kind: "addDependency"; a: number; b: number }
  | { kind: "removeDependency"; a: number; b: number }
  | { kind: "move"; item: number; parent: number | null }
  | { kind: "release"; item: number }
  /** Claim a ready item, create a child under it while it is leased, then release it: the child stays open. */
  | { kind: "releaseLeavingChild"; item: number }
  | { kind: "cancel"; item: number };

const index = fc.nat({ max: 50 });
const opArb = (weights: Record<Op["kind"], number>): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: weights.create,
      arbitrary: fc.record({
        kind: fc.constant("create" as const),
        parent: fc.option(index, { nil: null, freq: 4 }),
        deps: fc.array(index, { maxLength: 2 }),
        priority: fc.integer({ min: 0, max: 2 }),
      }),
    },
    { weight: weights.addDependency, arbitrary: fc.record({ kind: fc.constant("addDependency" as const), a: index, b: index }) },
    { weight: weights.removeDependency, arbitrary: fc.record({ kind: fc.constant("removeDependency" as const), a: index, b: index }) },
    { weight: weights.move, arbitrary: fc.record({ kind: fc.constant("move" as const), item: index, parent: fc.option(index, { nil: null, freq: 4 }) }) },
    { weight: weights.release, arbitrary: fc.record({ kind: fc.constant("release" as const), item: index }) },
    { weight: weights.releaseLeavingChild, arbitrary: fc.record({ kind: fc.constant("releaseLeavingChild" as const), item: index }) },
    { weight: weights.cancel, arbitrary: fc.record({ kind: fc.constant("cancel" as const), item: index }) },
  );
const rootsArb = fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 2, maxLength: 4 });
const scenarioArb = fc.oneof(
  // Uniform runs: every edit picks its items uniformly, in the generated order (varied shapes, moves, interleavings).
  fc.record({
    sharedBlockers: fc.constant(false),
    roots: rootsArb,
    ops: fc.array(opArb({ create: 4, addDependency: 4, removeDependency: 1, move: 4, release: 2, releaseLeavingChild: 2, cancel: 2 }), { minLength: 5, maxLength: 24 }),
  }),
  // Shared-blocker runs keep the initial roots as pure blockers (never a parent, a dependent or
  // moved): three in four blockers and items to finish are those roots, new items often go
  // under the newest one, and releases and cancels come last, so deep chains hold several
  // dependents of one blocker whose release or cancel must reach all of them.
  fc.record({
    sharedBlockers: fc.constant(true),
    roots: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 2 }),
    ops: fc.array(opArb({ create: 5, addDependency: 5, removeDependency: 1, move: 1, release: 2, releaseLeavingChild: 1, cancel: 2 }), { minLength: 5, maxLength: 24 }),
  }),
);

const it = graphTest({ poolSize: 5, scope: "file" });

let runCounter = 0;

describe("work graph against a reference model", () => {
  it("accepts exactly the edits the reference accepts, and stages always match", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const worker = await actors.agent("prop-worker");
    const drainer = await actors.agent("prop-drainer");

    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ sharedBlockers, roots, ops }) => {
        // Each run lives in its own id namespace of the one database.
        const prefix = `r${String(++runCounter).padStart(4, "0")}x`;
        const model = new Model();
        const order: string[] = []; // creation order (the queue's tie-breaker)
        let created = 0;
        const ids = () => order;
        const pick = (i: number) => ids()[i % ids().length]!;
        const blockers = () => (sharedBlockers ? ids().slice(0, roots.length) : []);
        const others = () => ids().slice(blockers().length);
        /** Any item but a reserved blocker (while there is one). */
        const pickOther = (i: number) => (others().length > 0 ? others()[i % others().length]! : pick(i));
        const pickBlocker = (i: number) => (sharedBlockers && i % 4 !== 0 ? blockers()[(i >> 2) % blockers().length]! : sharedBlockers ? pickOther(i) : pick(i));
        const pickParent = (i: number) => (sharedBlockers ? (i % 2 === 0 && others().length > 0 ? others().at(-1)! : pickOther(i)) : pick(i));
        const log: string[] = [];

        const create = async (parent: string | null, deps: string[], priority: number) => {
          const id = `${prefix}-${created++}`;
          const reasons = new Set<string>();
          if (parent !== null && model.get(parent).status !== "open") reasons.add("ALREADY_TERMINAL");
          const trial = model.clone();
          trial.items.set(id, { id, parent, status: "open", deps, priority });
          if (trial.hasCycle()) reasons.add("DEPENDENCY_CYCLE");
          log.push(`create ${id} parent=${parent} deps=${deps.join(",")} p=${priority} → ${[...reasons].join(",") || "ok"}`);
          await expectOutcome(operator.workItems.create({ id, title: `item ${created}`, parentId: parent, dependsOn: deps, priority }), reasons, () => {
            model.items.set(id, { id, parent, status: "open", deps: [...deps].sort(), priority });
            order.push(id);
          });
        };

        const expectOutcome = async (call: Promise<unknown>, reasons: Set<string>, apply: () => void) => {
          try {
            await call;
          } catch (error) {
            const reason = (error as { cause?: { reason?: string } }).cause?.reason;
            if (reasons.size === 0 || !reasons.has(reason ?? "")) {
              throw new Error(`database refused (${reason}: ${(error as Error).message}) where the reference expects ${[...reasons].join("|") || "success"}\n${log.join("\n")}`, { cause: error });
            }
            return;
          }
          if (reasons.size > 0) throw new Error(`database accepted where the reference expects ${[...reasons].join("|")}\n${log.join("\n")}`);
          apply();
        };

        const checkStages = async () => {
          const page = await operator.workItems.list({ search: prefix, limit: 200 });
          const byId = new Map<string, WorkItem>(page.items.map((item) => [item.id, item]));
          const actual = ids().map((id) => {
            const item = byId.get(id);
            return { id, stage: item?.stage, parentId: item?.parentId, dependsOn: item?.dependsOn, openChildCount: item?.openChildCount };
          });
          const expected = ids().map((id) => ({
            id,
            stage: model.stage(id),
            parentId: model.get(id).parent,
            dependsOn: model.get(id).deps,
            openChildCount: model.children(id).filter((child) => child.status === "open").length,
          }));
          expect(actual, log.join("\n")).toEqual(expected);
          // The readiness counters behind stage and the claim index, even where a higher stage hides them.
          const { rows } = await client.query<{ id: string; own: number; inherited: number; children: number }>(
            `SELECT id, open_dependency_count AS own, ancestor_dependency_count AS inherited, open_child_count AS children
               FROM work_items WHERE id LIKE $1 || '-%'`,
            [prefix],
          );
          const openDeps = (id: string) => model.get(id).deps.filter((blocker) => model.get(blocker).status === "open").length;
          expect(
            Object.fromEntries(rows.map((row) => [row.id, [row.own, row.inherited, row.children]])),
            log.join("\n"),
          ).toEqual(Object.fromEntries(ids().map((id) => [id, [
            openDeps(id),
            model.ancestors(id).reduce((sum, ancestor) => sum + openDeps(ancestor), 0),
            model.children(id).filter((child) => child.status === "open").length,
          ]])));
        };

        for (const priority of roots) await create(null, [], priority);
        // Shared-blocker runs start with two ordinary roots besides the blockers.
        if (sharedBlockers) for (let i = 0; i < 2; i++) await create(null, [], 0);
        // Shared-blocker runs build their structure first and then finish items, so each release
        // or cancel has as much to propagate through as possible.
        const finishing = (op: Op) => op.kind === "release" || op.kind === "releaseLeavingChild" || op.kind === "cancel";
        const sequence = sharedBlockers ? [...ops.filter((op) => !finishing(op)), ...ops.filter(finishing)] : ops;
        for (const op of sequence) {
          switch (op.kind) {
            case "create": {
              const deps = [...new Set(op.deps.map(pickBlocker))];
              await create(op.parent === null ? null : pickParent(op.parent), deps, op.priority);
              break;
            }
            case "addDependency": {
              const [a, b] = [sharedBlockers ? pickOther(op.a) : pick(op.a), pickBlocker(op.b)];
              const reasons = new Set<string>();
              if (a === b) reasons.add("DEPENDENCY_CYCLE");
              if (model.get(a).status !== "open") reasons.add("ALREADY_TERMINAL");
              if (model.get(a).deps.includes(b)) reasons.add("DUPLICATE");
              const trial = model.clone();
              if (a !== b && !trial.get(a).deps.includes(b)) trial.get(a).deps.push(b);
              if (a === b || trial.hasCycle()) reasons.add("DEPENDENCY_CYCLE");
              log.push(`addDependency ${a} → ${b} → ${[...reasons].join(",") || "ok"}`);
              await expectOutcome(operator.workItems.addDependency({ workItemId: a, dependsOnId: b }), reasons, () => {
                model.get(a).deps = [...model.get(a).deps, b].sort();
              });
              break;
            }
            case "removeDependency": {
              const a = pick(op.a);
              const deps = model.get(a).deps;
              const b = deps.length > 0 ? deps[op.b % deps.length]! : pick(op.b);
              const reasons = new Set<string>(deps.includes(b) ? [] : ["NOT_FOUND"]);
              log.push(`removeDependency ${a} → ${b} → ${[...reasons].join(",") || "ok"}`);
              await expectOutcome(operator.workItems.removeDependency({ workItemId: a, dependsOnId: b }), reasons, () => {
                model.get(a).deps = deps.filter((id) => id !== b);
              });
              break;
            }
            case "move": {
              const id = sharedBlockers ? pickOther(op.item) : pick(op.item);
              // One move in three aims under an item that (itself or through an ancestor) depends on
              // something in the moved subtree: the cycles through inherited dependencies.
              const subtree = new Set([id, ...model.descendants(id)]);
              const waiters = ids().filter((other) => !subtree.has(other) && [other, ...model.ancestors(other)].some((holder) => model.get(holder).deps.some((dep) => subtree.has(dep))));
              const parent = op.parent === null ? null
                : op.parent % 3 === 0 && waiters.length > 0 ? waiters[Math.floor(op.parent / 3) % waiters.length]!
                : sharedBlockers ? pickOther(op.parent) : pick(op.parent);
              const reasons = new Set<string>();
              if (parent === id) reasons.add("DEPENDENCY_CYCLE");
              else if (model.get(id).parent !== parent) {
                if (parent !== null && model.descendants(id).includes(parent)) reasons.add("DEPENDENCY_CYCLE");
                else {
                  if (parent !== null && model.get(parent).status !== "open") reasons.add("ALREADY_TERMINAL");
                  const trial = model.clone();
                  trial.get(id).parent = parent;
                  if (trial.hasCycle()) reasons.add("DEPENDENCY_CYCLE");
                }
              }
              log.push(`move ${id} under ${parent} → ${[...reasons].join(",") || "ok"}`);
              await expectOutcome(operator.workItems.move({ id, parentId: parent }), reasons, () => {
                model.get(id).parent = parent;
              });
              break;
            }
            case "release": {
              const id = pickBlocker(op.item);
              const stage = model.stage(id);
              log.push(`release ${id} (reference stage ${stage})`);
              if (stage === "ready") {
                const claimed = (await worker.leases.claim({ workItemId: id, durationSeconds: 600 }))!;
                await worker.leases.release({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: "done" });
                model.get(id).status = "released";
              } else {
                const refusal = await refused(worker.leases.claim({ workItemId: id, durationSeconds: 600 }));
                if (stage === "released" || stage === "cancelled") expect(["NOT_CLAIMABLE", "ALREADY_TERMINAL"], log.join("\n")).toContain(refusal.reason);
                else expect(refusal, log.join("\n")).toMatchObject({ reason: "NOT_CLAIMABLE", detail: { stage } });
              }
              break;
            }
            case "releaseLeavingChild": {
              const id = sharedBlockers ? pickOther(op.item) : pick(op.item);
              const stage = model.stage(id);
              log.push(`releaseLeavingChild ${id} (reference stage ${stage})`);
              if (stage !== "ready") break;
              const claimed = (await worker.leases.claim({ workItemId: id, durationSeconds: 600 }))!;
              await create(id, [], 0);
              await worker.leases.release({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: "done, child left open" });
              model.get(id).status = "released";
              break;
            }
            case "cancel": {
              const id = pickBlocker(op.item);
              const reasons = new Set<string>(model.get(id).status === "open" ? [] : ["ALREADY_TERMINAL"]);
              log.push(`cancel ${id} → ${[...reasons].join(",") || "ok"}`);
              await expectOutcome(operator.workItems.cancel({ id, reason: "property test" }), reasons, () => {
                for (const below of [id, ...model.descendants(id)]) if (model.get(below).status === "open") model.get(below).status = "cancelled";
              });
              break;
            }
          }
          await checkStages();
        }

        // The queue lists exactly the reference's ready items, in queue order; a drain by
        // next-claim takes them in that same order. (Other runs' items are leased or not ready;
        // a run that failed may leave some ready, so only this run's ids are compared.)
        const expectedQueue = ids()
          .filter((id) => model.stage(id) === "ready")
          .sort((a, b) => model.get(b).priority - model.get(a).priority || order.indexOf(a) - order.indexOf(b));
        const queue = (await operator.workItems.queue({ limit: 200 })).map((item) => item.id).filter((id) => id.startsWith(`${prefix}-`));
        expect(queue, log.join("\n")).toEqual(expectedQueue);
        const drained: string[] = [];
        for (;;) {
          const claimed = await drainer.leases.claim({ durationSeconds: 3600 });
          if (!claimed) break;
          if (claimed.workItem.id.startsWith(`${prefix}-`)) drained.push(claimed.workItem.id);
        }
        expect(drained, log.join("\n")).toEqual(expectedQueue);
      }),
      { numRuns: 160 },
    );
  }, 400_000);
});
