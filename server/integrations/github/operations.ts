import type { Db } from "../../db";
import { inTransaction } from "../../database/transaction";
import type { Caller } from "../../domain/types";
import { WorkGraphError } from "../../errors";
import {
  DEFAULT_PROJECT, githubBlockerNumbers, githubIssueExternalId, githubIssueFields, githubIssueImport, githubOpenTasks, githubTaskExternalId,
} from "@work-graph/contract";
import { hasLabel, type IssuesPayload } from "./issue";
import { logger } from "../../log";
import { appendEvents } from "../../sql/events";
import { lockItem } from "../../sql/fencing";
import { deleteOldGithubDeliveries, insertNoteUnderCurrentLease, selectItemIdByExternalId } from "./statements";
import { insertLeaseEndCancellation } from "../../sql/lease-end-cancellations";
import { endExpiredLeases, unendedLeaseOf } from "../../sql/leases";
import { cancelSubtree } from "../../operations/cancel-subtree";
import { addDependency } from "../../operations/dependencies";
import { importWorkItems } from "../../operations/import";
import { updateWorkItem } from "../../operations/update-item";

export interface GithubIssueSettings {
  /** The label that brings an issue in. */
  label: string;
  /** Repository (`owner/repo`, lower case) → project. */
  projects: ReadonlyMap<string, string>;
}

/** What an `issues` delivery did, as the webhook's answer says. */
export type IssueOutcome =
  | { result: "created"; workItemId: string }
  | { result: "updated"; workItemId: string }
  | { result: "cancelled"; workItemId: string }
  | { result: "cancel_pending"; workItemId: string }
  | { result: "unlabeled"; workItemId: string }
  | { result: "ignored"; why: string };

/** Everything GitHub does here is done by `github:<login>` with operator rights. */
export function githubCaller(login: string | undefined): Caller {
  return { tokenId: "github", role: "operator", workerId: null, actor: `github:${login ?? "unknown"}`, projects: [], capabilities: [] };
}

export const projectOfRepository = (settings: GithubIssueSettings, repository: string) => settings.projects.get(repository.toLowerCase()) ?? DEFAULT_PROJECT;

/** A refusal that leaves the delivery's other effects standing (e.g. a dependency that would make a cycle). */
function tolerated(error: unknown, what: string): void {
  if (!(error instanceof WorkGraphError)) throw error;
  logger().info({ reason: error.reason, detail: error.detail }, `GitHub: ${what} skipped: ${error.message}`);
}

/** The ids of the existing items of the issues this one depends on (those that do not exist yet are left out). */
async function existingBlockers(db: Db, payload: IssuesPayload, projectId: string): Promise<string[]> {
  const ids: string[] = [];
  for (const number of githubBlockerNumbers(payload.issue.body, payload.issue.number)) {
    const id = await selectItemIdByExternalId(db, projectId, githubIssueExternalId(payload.repository.full_name, number));
    if (id) ids.push(id);
  }
  return ids;
}

/** An existing item follows its issue: fields, new task-list entries as children, new blockers. */
async function updateFromIssue(db: Db, caller: Caller, payload: IssuesPayload, projectId: string, id: string): Promise<IssueOutcome> {
  try {
    await updateWorkItem(db, caller, { id, ...githubIssueFields(payload.issue) });
  } catch (error) {
    if (error instanceof WorkGraphError && error.reason === "ALREADY_TERMINAL") return { result: "ignored", why: `work item ${id} is already ${String(error.detail?.status)}` };
    throw error;
  }
  const externalId = githubIssueExternalId(payload.repository.full_name, payload.issue.number);
  const tasks = githubOpenTasks(payload.issue.body);
  if (tasks.length > 0) {
    try {
      await importWorkItems(db, caller, {
        projectId,
        items: tasks.map((task, index) => ({ ref: `task-${index + 1}`, parent: id, title: task, externalId: githubTaskExternalId(externalId, task) })),
      });
    } catch (error) {
      tolerated(error, "task-list children");
    }
  }
  for (const blocker of await existingBlockers(db, payload, projectId)) {
    try {
      await addDependency(db, caller, { workItemId: id, dependsOnId: blocker });
    } catch (error) {
      tolerated(error, `dependency of ${id} on ${blocker}`);
    }
  }
  return { result: "updated", workItemId: id };
}

/** Why an item whose issue was closed while it was leased is cancelled when that lease ends. */
const CLOSED_WHILE_LEASED = "its GitHub issue was closed while it was leased; cancelled when that lease ended without a release";

/**
 * `closed`: cancels the item (and its open descendants) unless it is leased; a leased item is
 * never pre-empted (rule 5): the core is asked to cancel it when that lease ends without a
 * release (server/operations/lease-end-cancellation.ts), and a note under the lease tells its worker.
 */
async function closeIssueItem(db: Db, caller: Caller, id: string): Promise<IssueOutcome> {
  return inTransaction(db, async (tx) => {
    const item = await lockItem(tx, id);
    if (!item || item.status !== "open") return { result: "ignored", why: `work item ${id} is already ${item?.status ?? "gone"}` };
    await endExpiredLeases(tx, [id]);
    if (await unendedLeaseOf(tx, id)) {
      await insertLeaseEndCancellation(tx, { workItemId: id, requestedBy: caller.actor, reason: CLOSED_WHILE_LEASED });
      await insertNoteUnderCurrentLease(
        tx,
        id,
        `The GitHub issue was closed by ${caller.actor} while this item is leased. Release it if the work is done; if the lease ends any other way, the item is cancelled.`,
      );
      return { result: "cancel_pending", workItemId: id };
    }
    await cancelSubtree(tx, { id }, caller.actor, { reason: "its GitHub issue was closed" });
    return { result: "cancelled", workItemId: id };
  });
}

/** One `issues` delivery (API.md "GitHub: issues in"). */
export async function applyIssueEvent(db: Db, settings: GithubIssueSettings, payload: IssuesPayload): Promise<IssueOutcome> {
  const caller = githubCaller(payload.sender?.login);
  const projectId = projectOfRepository(settings, payload.repository.full_name);
  const externalId = githubIssueExternalId(payload.repository.full_name, payload.issue.number);
  const existing = await selectItemIdByExternalId(db, projectId, externalId);
  switch (payload.action) {
    case "closed":
      return existing ? closeIssueItem(db, caller, existing) : { result: "ignored", why: "no work item for this issue" };
    case "unlabeled": {
      if (!existing || payload.label === undefined || !hasLabel([payload.label], settings.label)) return { result: "ignored", why: "not the work-graph label, or no work item" };
      // The item stays (work may be under way); the event says why GitHub no longer updates it.
      const note = `the label ${payload.label.name} was removed from the GitHub issue; the item stays and is no longer updated from it`;
      await inTransaction(db, (tx) => appendEvents(tx, [{ workItemId: existing, type: "github.unlabeled", actor: caller.actor, data: { label: payload.label!.name, note } }]));
      return { result: "unlabeled", workItemId: existing };
    }
    case "opened":
    case "edited":
    case "labeled":
    case "reopened": {
      if (!hasLabel(payload.issue.labels, settings.label)) return { result: "ignored", why: `the issue does not carry the label ${settings.label}` };
      if (existing) return updateFromIssue(db, caller, payload, projectId, existing);
      const { refs } = await importWorkItems(db, caller, { projectId, items: githubIssueImport(payload.repository.full_name, payload.issue, await existingBlockers(db, payload, projectId)) });
      return { result: "created", workItemId: refs[`#${payload.issue.number}`]! };
    }
    default:
      return { result: "ignored", why: `action ${payload.action} is not synced` };
  }
}

/** One batch of GitHub delivery ids GitHub can no longer redeliver deleted; returns how many (a cleanup of the expiry sweep). */
export async function sweepOldGithubDeliveries(db: Db, batch = 1000): Promise<number> {
  return inTransaction(db, (tx) => deleteOldGithubDeliveries(tx, batch));
}
