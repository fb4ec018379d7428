/**
 * Plan files → workItems.import input (docs/api.md "Import"), shared by the CLI (`work-graph
 * import`) and the dashboard's Import page: JSON (the input, or its `items`), YAML (same shape),
 * a task-master `tasks.json` (tagged `{ "master": { "tasks": [...] } }` or top-level
 * `{ "tasks": [...] }`) and Markdown lists (remark's syntax tree: nested items are children, a
 * numbered list is a sequence, `- [x]` items are left out).
 */
import type { List, ListItem, Nodes, Root } from "mdast";
import remarkGfm from "remark-gfm";
import remarkParse from "remark-parse";
import { unified } from "unified";
import { parse as parseYaml } from "yaml";
import type { ImportItemInput } from "@work-graph/contract";

export type PlanFormat = "json" | "yaml" | "task-master" | "markdown";

export interface Plan {
  format: PlanFormat;
  projectId?: string;
  items: ImportItemInput[];
  /** Where each ref comes from in the file (e.g. "line 12"), to point at an offending item. */
  sources: Record<string, string>;
}

/** A file that is not a plan: what is wrong with it, for a person. */
export class PlanFileError extends Error {}

/** Reads a plan; the format comes from the file name (.md, .yaml/.yml, else JSON, where task-master's shape is recognised). */
export function parsePlan(fileName: string, text: string): Plan {
  const name = fileName.split(/[\\/]/).pop() ?? fileName;
  if (/\.(md|markdown)$/i.test(name)) return fromMarkdown(name, text);
  if (/\.ya?ml$/i.test(name)) return fromInput("yaml", parseWith(() => parseYaml(text) as unknown, "YAML"));
  const data = parseWith(() => JSON.parse(text) as unknown, "JSON");
  const tasks = taskMasterTasks(data);
  return tasks ? fromTaskMaster(tasks) : fromInput("json", data);
}

function parseWith(parse: () => unknown, format: string): unknown {
  try {
    return parse();
  } catch (error) {
    throw new PlanFileError(`not valid ${format}: ${(error as Error).message.split("\n")[0]}`);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The import's input as it is, or just its `items` array. */
function fromInput(format: "json" | "yaml", data: unknown): Plan {
  const items = Array.isArray(data) ? data : isObject(data) ? data.items : undefined;
  if (!Array.isArray(items)) throw new PlanFileError("expected a list of items, or an object with an `items` list");
  const projectId = isObject(data) && typeof data.projectId === "string" ? data.projectId : undefined;
  const sources: Record<string, string> = {};
  items.forEach((item, index) => {
    if (isObject(item) && typeof item.ref === "string") sources[item.ref] = `item ${index + 1}`;
  });
  return { format, ...(projectId === undefined ? {} : { projectId }), items: items as ImportItemInput[], sources };
}

// ---- task-master ----

interface TaskMasterTask {
  id: number | string;
  title: string;
  description?: string;
  details?: string;
  testStrategy?: string;
  status?: string;
  priority?: string;
  dependencies?: (number | string)[];
  subtasks?: TaskMasterTask[];
}

const isTaskList = (value: unknown): value is TaskMasterTask[] =>
  Array.isArray(value) && value.every((task) => isObject(task) && (typeof task.id === "number" || typeof task.id === "string") && typeof task.title === "string");

/** The tasks of a task-master file: its `master` tag (else its only tag) or the older top-level `tasks`; null when it is not one. */
function taskMasterTasks(data: unknown): TaskMasterTask[] | null {
  if (!isObject(data)) return null;
  if (isTaskList(data.tasks) && !Array.isArray(data.items)) return data.tasks;
  const tags = Object.entries(data).filter(([, value]) => isObject(value) && isTaskList(value.tasks));
  const chosen = tags.find(([tag]) => tag === "master") ?? (tags.length === 1 ? tags[0] : undefined);
  if (!chosen) {
    if (tags.length > 1) throw new PlanFileError(`a tagged task-master file without a "master" tag: tags ${tags.map(([tag]) => tag).join(", ")}`);
    return null;
  }
  return (chosen[1] as { tasks: TaskMasterTask[] }).tasks;
}

const PRIORITY: Record<string, number> = { high: 2, medium: 1, low: 0 };
const LEFT_OUT = new Set(["done", "cancelled"]);

function fromTaskMaster(tasks: TaskMasterTask[]): Plan {
  const items: ImportItemInput[] = [];
  const sources: Record<string, string> = {};
  const kept = new Set<string>();
  const open = (task: TaskMasterTask) => !LEFT_OUT.has(String(task.status ?? "pending").toLowerCase());
  for (const task of tasks) {
    if (!open(task)) continue;
    kept.add(String(task.id));
    for (const sub of task.subtasks ?? []) if (open(sub)) kept.add(`${task.id}.${sub.id}`);
  }
  const ref = (id: string) => `task-master:${id}`;
  const describe = (task: TaskMasterTask) =>
    [task.description, task.details, task.testStrategy ? `Test strategy: ${task.testStrategy}` : undefined]
      .filter((part): part is string => typeof part === "string" && part.trim().length > 0).join("\n\n") || null;
  // A dependency on a task that is done or cancelled is met already: it is left out with the task.
  const dependencies = (names: string[]) => names.filter((name) => kept.has(name)).map(ref);
  for (const task of tasks) {
    if (!open(task)) continue;
    const id = String(task.id);
    const priority = PRIORITY[String(task.priority ?? "").toLowerCase()];
    items.push({
      ref: ref(id), externalId: ref(id), title: task.title, description: describe(task),
      dependsOn: dependencies((task.dependencies ?? []).map(String)),
      ...(priority === undefined ? {} : { priority }),
    });
    sources[ref(id)] = `task ${id}`;
    const siblings = new Set((task.subtasks ?? []).map((sub) => String(sub.id)));
    for (const sub of task.subtasks ?? []) {
      if (!open(sub)) continue;
      const subId = `${id}.${sub.id}`;
      // In a subtask, a plain number names a sibling subtask (task-master's own reading), a dotted one any subtask.
      const names = (sub.dependencies ?? []).map((dep) => {
        const name = String(dep);
        return name.includes(".") || !siblings.has(name) ? name : `${id}.${name}`;
      });
      const subPriority = PRIORITY[String(sub.priority ?? "").toLowerCase()];
      items.push({
        ref: ref(subId), externalId: ref(subId), parent: ref(id), title: sub.title, description: describe(sub),
        dependsOn: dependencies(names),
        ...(subPriority === undefined ? {} : { priority: subPriority }),
      });
      sources[ref(subId)] = `subtask ${subId}`;
    }
  }
  return { format: "task-master", items, sources };
}

// ---- Markdown ----

const MAX_EXTERNAL_ID = 200;

/** Plain text of a node (inline code and links keep their text, emphasis its content). */
function textOf(node: Nodes): string {
  if ("value" in node && typeof node.value === "string") return node.value;
  if ("children" in node) return (node.children as Nodes[]).map(textOf).join("");
  return "";
}

/** A short stable hash, to keep an over-long externalId unique once cut. */
function fnv(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}

function fromMarkdown(fileName: string, text: string): Plan {
  const tree = unified().use(remarkParse).use(remarkGfm).parse(text) as Root;
  const items: ImportItemInput[] = [];
  const sources: Record<string, string> = {};
  const externalIdOf = (path: string[]) => {
    const full = `md:${fileName}:${path.join("/")}`;
    return full.length <= MAX_EXTERNAL_ID ? full : `${full.slice(0, MAX_EXTERNAL_ID - 9)}~${fnv(full)}`;
  };

  const walkList = (list: List, parent: { ref: string; path: string[] } | null) => {
    let previous: string | null = null;
    const taken = new Map<string, number>();
    for (const entry of list.children as ListItem[]) {
      if (entry.checked === true) continue;
      const [first, ...rest] = entry.children;
      const title = (first && first.type !== "list" ? textOf(first) : "").split("\n")[0]!.trim();
      if (!title) continue;
      // Two siblings with one title still get distinct paths.
      const seen = (taken.get(title) ?? 0) + 1;
      taken.set(title, seen);
      const path = [...(parent?.path ?? []), seen === 1 ? title : `${title} (${seen})`];
      const ref = `md${items.length + 1}`;
      const more = [
        ...(first && first.type !== "list" ? textOf(first).split("\n").slice(1) : []),
        ...rest.filter((node) => node.type !== "list").map(textOf),
      ].join("\n").trim();
      items.push({
        ref, title: title.slice(0, 500), externalId: externalIdOf(path),
        ...(more ? { description: more } : {}),
        ...(parent ? { parent: parent.ref } : {}),
        ...(list.ordered && previous ? { dependsOn: [previous] } : {}),
      });
      sources[ref] = `line ${entry.position?.start.line ?? "?"}`;
      previous = ref;
      for (const nested of entry.children) if (nested.type === "list") walkList(nested, { ref, path });
    }
  };
  const visit = (node: Nodes) => {
    if (node.type === "list") return walkList(node, null);
    if ("children" in node) for (const child of node.children as Nodes[]) visit(child);
  };
  visit(tree);
  if (items.length === 0) throw new PlanFileError("no list items: a Markdown plan is a list (- item, 1. item, - [ ] item)");
  return { format: "markdown", items, sources };
}

// ---- what an import did (or would do) ----

export interface ImportOutcome {
  created: { id: string }[];
  existing: { ref: string; id: string }[];
  refs: Record<string, string>;
}

export interface PlanTreeLine {
  depth: number;
  ref: string;
  id: string;
  title: string;
  existing: boolean;
}

/** The plan as a tree (children under their parent, input order), each item with the id the import gave it and whether it existed already. */
export function planTree(items: ImportItemInput[], outcome: Pick<ImportOutcome, "existing" | "refs">): PlanTreeLine[] {
  const refs = new Set(items.map((item) => item.ref));
  const existing = new Set(outcome.existing.map((entry) => entry.ref));
  const children = new Map<string | null, ImportItemInput[]>();
  for (const item of items) {
    const parent = item.parent !== undefined && refs.has(item.parent) ? item.parent : null;
    children.set(parent, [...(children.get(parent) ?? []), item]);
  }
  const lines: PlanTreeLine[] = [];
  const walk = (parent: string | null, depth: number) => {
    for (const item of children.get(parent) ?? []) {
      lines.push({ depth, ref: item.ref, id: outcome.refs[item.ref] ?? "", title: item.title, existing: existing.has(item.ref) });
      walk(item.ref, depth + 1);
    }
  };
  walk(null, 0);
  return lines;
}
