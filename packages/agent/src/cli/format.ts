/** The CLI's human output: tables, durations, one-line summaries of items, leases and answers. */
import type { AttentionRequest, Lease, WorkItem } from "../sdk/client";

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

export function describeItem(item: WorkItem): string[] {
  return [
    `${item.id} - ${item.title}`,
    `  stage ${item.stage}, status ${item.status}, priority ${item.priority}`,
    `  parent ${item.parentId ?? "-"}, depends on ${item.dependsOn.length ? item.dependsOn.join(", ") : "-"}, open children ${item.openChildCount}`,
    `  current lease: ${item.currentLease ? describeLease(item.currentLease) : "none"}`,
    `  previous worker: ${item.previousWorkerId ?? "-"}`,
    `  created ${item.createdAt}, updated ${item.updatedAt}`,
    ...(item.description ? ["", ...item.description.split("\n").map((line) => `  ${line}`)] : []),
  ];
}
