/** The CLI's human output: tables, durations, one-line summaries of items, leases and answers. */
import type { AttentionRequest, Lease, WorkItem } from "@work-graph/contract";

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function seconds(ms: number): string {
  const total = Math.round(ms / 1000);
  if (total < 120) return `${total}s`;
  if (total < 7200) return `${Math.floor(total / 60)}m${total % 60 ? ` ${total % 60}s` : ""}`;
  return `${Math.floor(total / 3600)}h ${Math.floor((total % 3600) / 60)}m`;
}

/** Lease length as the server set it (no local clock involved). */
export const leaseLength = (lease: Lease) => seconds(Date.parse(lease.expiresAt) - Date.parse(lease.renewedAt ?? lease.acquiredAt));

export function table(rows: string[][], header: string[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  return all.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ").trimEnd()).join("\n");
}

export const oneLine = (text: string, max = 80) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function describeLease(lease: Lease): string {
  const state = lease.endedAt ? `ended ${lease.endedAt} (${lease.outcome})` : `expires ${lease.expiresAt}`;
  return `lease ${lease.id} epoch ${lease.epoch}, worker ${lease.workerId}, ${state}`;
}

export function describeAnswers(attention: AttentionRequest[]): string[] {
  if (attention.length === 0) return [];
  return [
    "Attention requests raised on it before (read the answers before you continue):",
    ...attention.map((request) =>
      `  [${request.kind}] ${request.question}\n    → ${request.status === "resolved" ? `${request.resolution} (by ${request.resolvedBy})` : "not answered yet"}`),
  ];
}

/** "in 4 min", "in 45 s", "in 3 h 5 min", "in 2 days"; "now" once it has passed. */
export function fromNow(time: string, now = Date.now()): string {
  const total = Math.round((Date.parse(time) - now) / 1000);
  if (total <= 0) return "now";
  if (total < 60) return `in ${total} s`;
  if (total < 3600) return `in ${Math.round(total / 60)} min`;
  if (total < 48 * 3600) return `in ${Math.floor(total / 3600)} h${Math.round((total % 3600) / 60) ? ` ${Math.round((total % 3600) / 60)} min` : ""}`;
  return `in ${Math.round(total / 86_400)} days`;
}

/** The stage, with when a scheduled item becomes claimable ("scheduled (in 4 min)"; by this machine's clock, for reading only). */
export const stageOf = (item: WorkItem) =>
  item.stage === "scheduled" && item.notBefore ? `${item.stage} (${fromNow(item.notBefore)})` : item.stage;

/** The queue policy of an item in one line: project, requires, concurrency key, not before. */
export function describePolicy(item: WorkItem): string {
  return [
    `project ${item.projectId}`,
    `requires ${item.requires.length ? item.requires.join(", ") : "-"}`,
    `concurrency key ${item.concurrencyKey ?? "-"}`,
    `not before ${item.notBefore ?? "-"}`,
    ...(item.externalId ? [`external id ${item.externalId}`] : []),
  ].join(", ");
}

export function describeItem(item: WorkItem): string[] {
  return [
    `${item.id} - ${item.title}`,
    `  stage ${stageOf(item)}, status ${item.status}, priority ${item.priority}`,
    `  ${describePolicy(item)}`,
    `  parent ${item.parentId ?? "-"}, depends on ${item.dependsOn.length ? item.dependsOn.join(", ") : "-"}, open children ${item.openChildCount}`,
    `  current lease: ${item.currentLease ? describeLease(item.currentLease) : "none"}`,
    `  previous worker: ${item.previousWorkerId ?? "-"}`,
    `  created ${item.createdAt}, updated ${item.updatedAt}`,
    ...(item.description ? ["", ...item.description.split("\n").map((line) => `  ${line}`)] : []),
  ];
}
