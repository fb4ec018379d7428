import type { ImportItem, Reason } from "@work-graph/contract";
import { WorkGraphError } from "../errors";
import { generateWorkItemId } from "./ids";

/*
 * workItems.import (docs/api.md "Import"): the pure part. It checks an import's shape (refs,
 * parents, dependencies, hierarchy), decides from facts the database gave it which items exist
 * already (externalId), where each new item goes and what it inherits, and finds cycles with
 * Tarjan's algorithm over the waits-for states the new items add. Every refusal names the first
 * offending item (input order) in `detail.ref`; nothing here touches the database.
 */

/** A reference to an item: another item of this import, or an item that exists already. */
export type Target = { ref: string } | { id: string };

/** The import after the checks that need no database: every parent and blocker resolved to a ref or an existing id. */
export interface ImportShape {
  items: ImportItem[];
  parentOf: (Target | null)[];
  blockersOf: Target[][];
  /** Item indexes, every parent before its children. */
  hierarchyOrder: number[];
  /** Ids outside the import that are named as a parent or blocker. */
  namedIds: string[];
}

export const refused = (reason: Reason, ref: string, message: string, detail: Record<string, unknown> = {}) =>
  new WorkGraphError(reason, `item ${JSON.stringify(ref)}: ${message}`, { ref, ...detail });

/** Refs unique, one time gate, parents and blockers named as refs or ids, hierarchy a forest, no self-edges. */
export function shapeImport(items: ImportItem[]): ImportShape {
  const indexOf = new Map<string, number>();
  const givenIds = new Map<string, string>();
  items.forEach((item, index) => {
    if (indexOf.has(item.ref)) throw refused("VALIDATION", item.ref, "the ref is given twice");
    indexOf.set(item.ref, index);
    if (item.id === undefined) return;
    const twin = givenIds.get(item.id);
    if (twin !== undefined) throw refused("DUPLICATE", item.ref, `id ${item.id} is also given to ${JSON.stringify(twin)}`, { id: item.id });
    givenIds.set(item.id, item.ref);
  });
  const target = (name: string): Target => (indexOf.has(name) ? { ref: name } : { id: name });
  const namedIds = new Set<string>();
  const parentOf = items.map((item) => (item.parent === undefined ? null : target(item.parent)));
  const blockersOf = items.map((item) => [...new Set(item.dependsOn ?? [])].map(target));
  items.forEach((item, index) => {
    if (item.notBefore !== undefined && item.delaySeconds !== undefined) throw refused("VALIDATION", item.ref, "give notBefore or delaySeconds, not both");
    if (item.parent === item.ref) throw refused("DEPENDENCY_CYCLE", item.ref, "an item cannot be its own parent");
    if (item.dependsOn?.includes(item.ref)) throw refused("DEPENDENCY_CYCLE", item.ref, "an item cannot depend on itself");
    for (const named of [parentOf[index], ...blockersOf[index]!]) if (named && "id" in named) namedIds.add(named.id);
  });

  // Parents before children; a parent loop among refs is a cycle (a parent waits for its children).
  const depth = new Array<number>(items.length).fill(-1);
  const depthOf = (start: number): number => {
    const path: number[] = [];
    let at: number | undefined = start;
    while (at !== undefined && depth[at] === -1) {
      // Name an item on the loop itself, not one of the items whose parent chain leads into it.
      if (path.includes(at)) throw refused("DEPENDENCY_CYCLE", items[Math.min(...path.slice(path.indexOf(at)))]!.ref, "the parents form a loop");
      path.push(at);
      const parent: Target | null = parentOf[at]!;
      at = parent && "ref" in parent ? indexOf.get(parent.ref) : undefined;
    }
    let base = at === undefined ? -1 : depth[at]!;
    for (const index of path.reverse()) depth[index] = ++base;
    return depth[start]!;
  };
  const hierarchyOrder = items.map((_, index) => index).sort((a, b) => depthOf(a) - depthOf(b) || a - b);
  return { items, parentOf, blockersOf, hierarchyOrder, namedIds: [...namedIds] };
}

/** What the database says about an item outside the import that the import names or finds by externalId. */
export interface ExistingItem {
  id: string;
  status: string;
  projectId: string;
  /** Open blockers a new child of it inherits (its own plus its ancestors'). */
  inherited: number;
  priority: number;
  requires: string[];
  concurrencyKey: string | null;
}

export interface ImportFacts {
  /** The project of root items; false when the caller may not create there (rule 12). */
  projectId: string;
  /** Whether projectId was given explicitly (a child under an existing parent elsewhere is then VALIDATION). */
  projectGiven: boolean;
  /** Existing items by id (named ones and externalId matches), only those the caller may see. */
  existing: Map<string, ExistingItem>;
  /** Items found by (project, externalId), keyed `${project}\u0000${externalId}`. */
  byExternalId: Map<string, string>;
  /** Ids given for new items that are taken already. */
  takenIds: Set<string>;
}

export interface NewRow {
  index: number;
  id: string;
  title: string;
  description: string | null;
  parentId: string | null;
  projectId: string;
  priority: number;
  requires: string[];
  concurrencyKey: string | null;
  notBefore: string | null;
  delaySeconds: number | null;
  externalId: string | null;
  dependsOn: string[];
  openDependencies: number;
  inherited: number;
}

export interface ImportPlan {
  /** New items in hierarchy order (parents first). */
  rows: NewRow[];
  /** Ref → id, for every item. */
  refs: Record<string, string>;
  existing: { ref: string; id: string }[];
  /** Existing parents and how many new children each gets. */
  newChildren: Map<string, number>;
}

export const externalKey = (projectId: string, externalId: string) => `${projectId}\u0000${externalId}`;

/** Resolves every ref to an id (found by externalId, given or generated), places and fills in each new item; refuses what cannot be made. */
export function planImport(shape: ImportShape, facts: ImportFacts): ImportPlan {
  const { items } = shape;
  const refs: Record<string, string> = {};
  const projectOf = new Map<string, string>();
  const resolved = new Map<string, NewRow | ExistingItem>();
  const existingRefs: { index: number; id: string }[] = [];
  const rows: NewRow[] = [];
  const newChildren = new Map<string, number>();
  const seenExternal = new Map<string, string>();
  const newIds = new Map<string, string>();

  const existingNamed = (ref: string, id: string, what: string): ExistingItem => {
    const item = facts.existing.get(id);
    if (!item) throw refused("NOT_FOUND", ref, `${what} ${JSON.stringify(id)} does not exist`, { id });
    return item;
  };

  for (const index of shape.hierarchyOrder) {
    const item = items[index]!;
    const parentTarget = shape.parentOf[index]!;
    let parent: NewRow | ExistingItem | null = null;
    if (parentTarget) parent = "ref" in parentTarget ? resolved.get(parentTarget.ref)! : existingNamed(item.ref, parentTarget.id, "parent work item");
    const projectId = parent?.projectId ?? facts.projectId;
    if (parent && "status" in parent && facts.projectGiven && parent.projectId !== facts.projectId) {
      throw refused("VALIDATION", item.ref, `a child is in its parent's project (${parent.projectId}), not ${facts.projectId}`, {
        projectId: facts.projectId, parentProjectId: parent.projectId,
      });
    }
    projectOf.set(item.ref, projectId);

    if (item.externalId !== undefined) {
      const key = externalKey(projectId, item.externalId);
      const twin = seenExternal.get(key);
      if (twin !== undefined) throw refused("DUPLICATE", item.ref, `externalId ${JSON.stringify(item.externalId)} is also given to ${JSON.stringify(twin)}`, { externalId: item.externalId });
      seenExternal.set(key, item.ref);
      const found = facts.byExternalId.get(key);
      if (found !== undefined) {
        refs[item.ref] = found;
        resolved.set(item.ref, facts.existing.get(found)!);
        existingRefs.push({ index, id: found });
        continue;
      }
    }

    if (parent && "status" in parent && parent.status !== "open") {
      throw refused("ALREADY_TERMINAL", item.ref, `parent ${parent.id} is already ${parent.status}`, { workItemId: parent.id, status: parent.status });
    }
    const id = item.id ?? generateWorkItemId(item.title);
    if (facts.takenIds.has(id)) throw refused("DUPLICATE", item.ref, `work item ${id} already exists`, { id });
    const twin = newIds.get(id);
    if (twin !== undefined) throw refused("DUPLICATE", item.ref, `id ${id} is also given to ${JSON.stringify(twin)}`, { id });
    newIds.set(id, item.ref);
    const row: NewRow = {
      index, id, projectId,
      // Under a new parent: counted once every blocker is known (below).
      inherited: parent && "status" in parent ? parent.inherited : 0,
      title: item.title,
      description: item.description ?? null,
      parentId: parent?.id ?? null,
      priority: item.priority ?? parent?.priority ?? 0,
      requires: item.requires === undefined ? (parent?.requires ?? []) : [...new Set(item.requires)].sort(),
      concurrencyKey: item.concurrencyKey === undefined ? (parent?.concurrencyKey ?? null) : item.concurrencyKey,
      notBefore: item.notBefore ?? null,
      delaySeconds: item.delaySeconds ?? null,
      externalId: item.externalId ?? null,
      dependsOn: [],
      openDependencies: 0,
    };
    if (parent && "status" in parent) newChildren.set(parent.id, (newChildren.get(parent.id) ?? 0) + 1);
    refs[item.ref] = id;
    resolved.set(item.ref, row);
    rows.push(row);
  }

  // Blockers once every ref has its id: a ref may name an item later in the input.
  const rowByIndex = new Map(rows.map((row) => [row.index, row]));
  items.forEach((item, index) => {
    const row = rowByIndex.get(index);
    for (const blocker of shape.blockersOf[index]!) {
      if ("ref" in blocker) {
        if (!row) continue;
        const target = resolved.get(blocker.ref)!;
        row.dependsOn.push(refs[blocker.ref]!);
        if (!("status" in target) || target.status === "open") row.openDependencies++;
      } else {
        const target = existingNamed(item.ref, blocker.id, "dependency");
        if (!row) continue;
        row.dependsOn.push(target.id);
        if (target.status === "open") row.openDependencies++;
      }
    }
  });
  // A child inherits its ancestors' open blockers: counted again now that every parent's are known.
  const rowById = new Map(rows.map((row) => [row.id, row]));
  for (const row of rows) {
    const parent = row.parentId === null ? undefined : rowById.get(row.parentId);
    if (parent) row.inherited = parent.openDependencies + parent.inherited;
  }
  return {
    rows,
    refs,
    existing: existingRefs.sort((a, b) => a.index - b.index).map(({ index, id }) => ({ ref: items[index]!.ref, id })),
    newChildren,
  };
}

/** A waits-for state (docs/api.md DEPENDENCY_CYCLE): an item reached in full, or as an ancestor ("up": only its blockers and its parent). */
export interface WaitState {
  id: string;
  up: boolean;
}
const stateKey = (state: WaitState) => `${state.up ? "^" : "="}${state.id}`;

/** Where the new items' waits-for edges leave the import (existing states) and where existing ones come back in (existing parents, in full). */
export function boundaryStates(plan: ImportPlan): { exits: WaitState[]; entries: WaitState[] } {
  const newIds = new Set(plan.rows.map((row) => row.id));
  const exits = new Map<string, WaitState>();
  const add = (state: WaitState) => exits.set(stateKey(state), state);
  for (const row of plan.rows) {
    for (const blocker of row.dependsOn) if (!newIds.has(blocker)) add({ id: blocker, up: false });
    if (row.parentId !== null && !newIds.has(row.parentId)) add({ id: row.parentId, up: true });
  }
  const entries = [...plan.newChildren.keys()].map((id) => ({ id, up: false }));
  for (const entry of entries) add(entry);
  return { exits: [...exits.values()], entries };
}

/**
 * The first item (input order) on a waits-for cycle through the new items, or null. `reaches`
 * holds the pairs (exit state, entry state) the existing graph connects (the recursive walk
 * over existing edges): with the new items' own edges they make the whole graph around them.
 */
export function firstOnCycle(plan: ImportPlan, reaches: { from: WaitState; to: WaitState }[]): NewRow | null {
  const byId = new Map(plan.rows.map((row) => [row.id, row]));
  const childrenOf = new Map<string, string[]>();
  for (const row of plan.rows) if (row.parentId !== null) childrenOf.set(row.parentId, [...(childrenOf.get(row.parentId) ?? []), row.id]);
  const successors = (key: string): WaitState[] => {
    const up = key.startsWith("^");
    const id = key.slice(1);
    const row = byId.get(id);
    if (!row) {
      // An existing state: the walk's pairs, and an existing parent's new children.
      const next = reaches.filter((pair) => stateKey(pair.from) === key).map((pair) => pair.to);
      if (!up) next.push(...(childrenOf.get(id) ?? []).map((child) => ({ id: child, up: false })));
      return next;
    }
    const next: WaitState[] = row.dependsOn.map((blocker) => ({ id: blocker, up: false }));
    if (row.parentId !== null) next.push({ id: row.parentId, up: true });
    if (!up) next.push(...(childrenOf.get(id) ?? []).map((child) => ({ id: child, up: false })));
    return next;
  };

  // Tarjan's strongly connected components, iterative (a deep plan must not overflow the stack).
  const indexOf = new Map<string, number>();
  const lowOf = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  let counter = 0;
  let first: NewRow | null = null;
  const consider = (component: string[]) => {
    const cyclic = component.length > 1 || successors(component[0]!).some((next) => stateKey(next) === component[0]);
    if (!cyclic) return;
    // The item that would wait for itself: on the cycle in full (an ancestor's "up" state only passes its blockers on).
    for (const key of component) {
      const row = key.startsWith("=") ? byId.get(key.slice(1)) : undefined;
      if (row && (!first || row.index < first.index)) first = row;
    }
  };
  const roots = plan.rows.flatMap((row) => [stateKey({ id: row.id, up: false }), stateKey({ id: row.id, up: true })]);
  for (const root of roots) {
    if (indexOf.has(root)) continue;
    const frames: { key: string; next: string[]; at: number }[] = [];
    const open = (key: string) => {
      indexOf.set(key, counter);
      lowOf.set(key, counter++);
      stack.push(key);
      onStack.add(key);
      frames.push({ key, next: successors(key).map(stateKey), at: 0 });
    };
    open(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      if (frame.at < frame.next.length) {
        const next = frame.next[frame.at++]!;
        if (!indexOf.has(next)) open(next);
        else if (onStack.has(next)) lowOf.set(frame.key, Math.min(lowOf.get(frame.key)!, indexOf.get(next)!));
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) lowOf.set(parent.key, Math.min(lowOf.get(parent.key)!, lowOf.get(frame.key)!));
      if (lowOf.get(frame.key) === indexOf.get(frame.key)) {
        const component: string[] = [];
        let key: string;
        do {
          key = stack.pop()!;
          onStack.delete(key);
          component.push(key);
        } while (key !== frame.key);
        consider(component);
      }
    }
  }
  return first;
}
