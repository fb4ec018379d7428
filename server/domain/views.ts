import { Prisma } from "../generated/prisma/client";
import { STAGE_SQL } from "./readiness";
import type { AttentionRequest, Lease, Note, Stage, WorkGraphEvent, WorkItem } from "@work-graph/contract";

// Row → API shape. Every timestamp leaves as an ISO-8601 UTC string.

const iso = (value: Date | string | null | undefined): string | null =>
  value === null || value === undefined ? null : new Date(value).toISOString();
const isoRequired = (value: Date | string): string => new Date(value).toISOString();

export const LEASE_COLUMNS = Prisma.sql`l.id::text AS id, l.work_item_id AS "workItemId", l.worker_id AS "workerId", l.epoch,
    l.acquired_at AS "acquiredAt", l.expires_at AS "expiresAt", l.renewed_at AS "renewedAt",
    l.ended_at AS "endedAt", l.outcome`;

export interface LeaseRow {
  id: string;
  workItemId: string;
  workerId: string;
  epoch: number;
  acquiredAt: Date;
  expiresAt: Date;
  renewedAt: Date | null;
  endedAt: Date | null;
  outcome: string | null;
}

export function toLease(row: LeaseRow): Lease {
  return {
    id: row.id,
    workItemId: row.workItemId,
    workerId: row.workerId,
    epoch: Number(row.epoch),
    acquiredAt: isoRequired(row.acquiredAt),
    expiresAt: isoRequired(row.expiresAt),
    renewedAt: iso(row.renewedAt),
    endedAt: iso(row.endedAt),
    outcome: (row.outcome ?? null) as Lease["outcome"],
  };
}

export interface WorkItemRow {
  id: string;
  title: string;
  description: string | null;
  parentId: string | null;
  status: WorkItem["status"];
  stage: Stage;
  priority: number;
  dependsOn: string[] | null;
  openChildCount: number;
  previousWorkerId: string | null;
  projectId: string;
  requires: string[] | null;
  concurrencyKey: string | null;
  notBefore: Date | string | null;
  externalId: string | null;
  createdAt: Date;
  updatedAt: Date;
  lease: LeaseRow | null;
}

/**
 * The WorkItem select list over a row source aliased `w` (the table, or a CTE's RETURNING
 * of updated rows). Its lease subquery sees the statement's snapshot, so a statement that
 * creates a lease fills currentLease itself.
 */
export const WORK_ITEM_COLUMNS = Prisma.sql`w.id, w.title, w.description, w.parent_id AS "parentId", w.status,
    ${STAGE_SQL} AS stage, w.priority,
    ARRAY(SELECT d.depends_on_id FROM dependencies d WHERE d.work_item_id = w.id ORDER BY d.depends_on_id) AS "dependsOn",
    w.open_child_count AS "openChildCount", w.previous_worker_id AS "previousWorkerId",
    w.project_id AS "projectId", w.requires, w.concurrency_key AS "concurrencyKey", w.not_before AS "notBefore",
    w.external_id AS "externalId",
    w.created_at AS "createdAt", w.updated_at AS "updatedAt",
    (SELECT json_build_object('id', l.id, 'workItemId', l.work_item_id, 'workerId', l.worker_id, 'epoch', l.epoch,
        'acquiredAt', l.acquired_at, 'expiresAt', l.expires_at, 'renewedAt', l.renewed_at, 'endedAt', l.ended_at, 'outcome', l.outcome)
       FROM leases l WHERE l.id = w.current_lease_id AND w.lease_expires_at > work_graph_now()) AS lease`;

export function toWorkItem(row: WorkItemRow): WorkItem {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    parentId: row.parentId,
    status: row.status,
    stage: row.stage,
    priority: Number(row.priority),
    dependsOn: row.dependsOn ?? [],
    openChildCount: Number(row.openChildCount),
    currentLease: row.lease ? toLease(row.lease) : null,
    previousWorkerId: row.previousWorkerId,
    projectId: row.projectId,
    requires: row.requires ?? [],
    concurrencyKey: row.concurrencyKey,
    notBefore: iso(row.notBefore),
    externalId: row.externalId,
    createdAt: isoRequired(row.createdAt),
    updatedAt: isoRequired(row.updatedAt),
  };
}

export const ATTENTION_COLUMNS = Prisma.sql`a.id::text AS id, a.work_item_id AS "workItemId", a.lease_id::text AS "leaseId",
    a.worker_id AS "workerId", a.kind, a.question, a.context, a.options, a.blocking, a.status, a.resolution,
    a.resolved_by AS "resolvedBy", a.resolved_by_name AS "resolvedByName", a.created_at AS "createdAt", a.resolved_at AS "resolvedAt"`;

export function toAttentionRequest(row: Omit<AttentionRequest, "createdAt" | "resolvedAt"> & { createdAt: Date; resolvedAt: Date | null }): AttentionRequest {
  return { ...row, options: row.options ?? [], createdAt: isoRequired(row.createdAt), resolvedAt: iso(row.resolvedAt) };
}

export const NOTE_COLUMNS = Prisma.sql`n.id::text AS id, n.work_item_id AS "workItemId", n.lease_id::text AS "leaseId", n.epoch,
    n.worker_id AS "workerId", n.content, n.created_at AS "createdAt"`;

export function toNote(row: Omit<Note, "createdAt"> & { createdAt: Date }): Note {
  return { ...row, epoch: Number(row.epoch), createdAt: isoRequired(row.createdAt) };
}

/** The display name of the person recorded as `actor` (null for tokens and agents): people.actor is what their actions record. */
export const actorNameOf = (actor: Prisma.Sql) =>
  Prisma.sql`(SELECT COALESCE(p.name, p.email, p.subject) FROM people p WHERE p.actor = ${actor} ORDER BY p.created_at LIMIT 1)`;

export const EVENT_COLUMNS = Prisma.sql`e.sequence, e.work_item_id AS "workItemId", e.type, e.actor, ${actorNameOf(Prisma.sql`e.actor`)} AS "actorName",
    e.lease_id::text AS "leaseId", e.epoch, e.data, e.created_at AS "createdAt"`;

/** A timestamptz that jsonb_build_object wrote into event data ("2026-01-02T03:04:05.123456+00:00"). */
const JSON_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Event data leaves with its timestamps in the API's one format, like every other time. */
function isoTimestamps(value: unknown): unknown {
  if (typeof value === "string") return JSON_TIMESTAMP.test(value) ? isoRequired(value) : value;
  if (Array.isArray(value)) return value.map(isoTimestamps);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isoTimestamps(v)]));
  return value;
}

export function toEvent(row: Omit<WorkGraphEvent, "sequence" | "createdAt"> & { sequence: bigint | number; createdAt: Date }): WorkGraphEvent {
  return { ...row, data: isoTimestamps(row.data) as WorkGraphEvent["data"], sequence: Number(row.sequence), createdAt: isoRequired(row.createdAt) };
}
