import fc from "fast-check";
import { expect } from "vitest";
import { databaseTest, refusal } from "../support/fixtures";

/*
 * workItems.import's cycle check against a plain model of the waits-for graph (docs/api.md
 * DEPENDENCY_CYCLE): a parent waits for its children, a dependent and its descendants wait for
 * the blocker. Random plans over refs and a few existing items: cyclic ones are refused naming
 * an item on a cycle, acyclic ones accepted (dry runs, so the existing graph stays as it is).
 */

const it = databaseTest();

/** Existing items: ex-a ⊃ ex-b; ex-c depends on ex-b; ex-d depends on ex-c. */
const EXISTING = [
  { id: "ex-a", parent: null, deps: [] },
  { id: "ex-b", parent: "ex-a", deps: [] },
  { id: "ex-c", parent: null, deps: ["ex-b"] },
  { id: "ex-d", parent: null, deps: ["ex-c"] },
] as const;

interface Node { parent: string | null; deps: string[] }

/** The items (by id) that lie on a waits-for cycle, by a breadth-first walk from each item's own state. */
function onCycles(nodes: Map<string, Node>): Set<string> {
  const children = new Map<string, string[]>();
  for (const [id, node] of nodes) if (node.parent !== null) children.set(node.parent, [...(children.get(node.parent) ?? []), id]);
  const next = (id: string, up: boolean): [string, boolean][] => {
    const node = nodes.get(id)!;
    const out: [string, boolean][] = node.deps.map((dep) => [dep, false]);
    if (node.parent !== null) out.push([node.parent, true]);
    if (!up) out.push(...(children.get(id) ?? []).map((child) => [child, false] as [string, boolean]));
    return out;
  };
  const cyclic = new Set<string>();
  for (const id of nodes.keys()) {
    const seen = new Set<string>();
    const queue = next(id, false);
    while (queue.length > 0) {
      const [at, up] = queue.shift()!;
      if (at === id && !up) { cyclic.add(id); break; }
      const key = `${up}:${at}`;
      if (seen.has(key)) continue;
      seen.add(key);
      queue.push(...next(at, up));
    }
  }
  return cyclic;
}

const plans = fc.integer({ min: 1, max: 10 }).chain((size) => {
  const refs = Array.from({ length: size }, (_, n) => `r${n}`);
  const names = [...refs, ...EXISTING.map((item) => item.id)];
  return fc.array(
    fc.record({
      parent: fc.option(fc.constantFrom(...names), { freq: 2 }),
      deps: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 3 }),
    }),
    { minLength: size, maxLength: size },
  ).map((shapes) => shapes.map((shape, n) => ({ ref: refs[n]!, ...shape })));
});

it("refuses exactly the cyclic plans, naming an item on a cycle", async ({ people }) => {
  for (const item of EXISTING) {
    await people.operator.workItems.create({ id: item.id, title: item.id, parentId: item.parent, dependsOn: [...item.deps] });
  }
  let cyclicSeen = 0;
  await fc.assert(
    fc.asyncProperty(plans, async (plan) => {
      // Self-edges are refused before any graph walk; the model covers them too.
      const nodes = new Map<string, Node>(EXISTING.map((item) => [item.id, { parent: item.parent, deps: [...item.deps] }]));
      for (const item of plan) nodes.set(`new-${item.ref}`, { parent: null, deps: [] });
      const idOf = (name: string) => (name.startsWith("r") ? `new-${name}` : name);
      for (const item of plan) nodes.set(idOf(item.ref), { parent: item.parent === null ? null : idOf(item.parent), deps: item.deps.map(idOf) });
      const cyclic = onCycles(nodes);
      const items = plan.map((item) => ({
        ref: item.ref, id: idOf(item.ref), title: item.ref, dependsOn: item.deps, ...(item.parent === null ? {} : { parent: item.parent }),
      }));
      if (cyclic.size === 0) {
        const result = await people.operator.workItems.import({ dryRun: true, items });
        expect(result.created).toHaveLength(plan.length);
      } else {
        cyclicSeen++;
        const refused = await refusal(people.operator.workItems.import({ dryRun: true, items }));
        expect(refused.reason).toBe("DEPENDENCY_CYCLE");
        expect(cyclic.has(idOf(refused.detail.ref as string))).toBe(true);
      }
    }),
    { numRuns: 300 },
  );
  expect(cyclicSeen).toBeGreaterThan(20);
});
