import type { Db } from "../db";
import { isTerminalStage } from "@work-graph/contract";
import type { AttentionRequest, Lease, Stage } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toAttentionRequest } from "../domain/views";
import { notFound } from "../errors";
import {
  countChildren, countDependents, selectAncestorBlockers, selectAncestors, selectBlockers, selectChildren, selectDependents,
  selectInbox, selectOpenBlockingRequests, selectWaiting, type ItemRef,
} from "../sql/dashboard";
import { inCallerScope, inProjects } from "../domain/scope";
import { refuseItemOutsideScope } from "../sql/visibility";

/*
 * Read-only views the dashboard needs beyond API.md's procedures (exposed as
 * dashboard.inbox and dashboard.neighbourhood). They only read; nothing here changes state.
 */

export type InboxEntry = AttentionRequest & { workItemTitle: string; workItemStage: Stage };

/**
 * The attention inbox: open requests oldest first (the longest-waiting question first);
 * resolved requests most recently resolved first. Each with its item's title and stage now.
 */
export async function attentionInbox(
  db: Db,
  caller: Pick<Caller, "projects">,
  input: { status: "open" | "resolved"; limit: number; projectId?: string },
): Promise<InboxEntry[]> {
  const rows = await selectInbox(db, input.status, input.limit, inProjects(caller, input.projectId));
  return rows.map(({ workItemTitle, workItemStage, ...row }) => ({ ...toAttentionRequest(row), workItemTitle, workItemStage }));
}

export interface Neighbourhood {
  /** Parent first, then its parent, up to the root. */
  ancestors: (ItemRef & { depth: number })[];
  /** Direct blockers of the item (its dependsOn), with their stage. */
  dependencies: ItemRef[];
  /** Items that depend on this one (first `limit` by id) and how many there are in all. */
  dependents: ItemRef[];
  dependentCount: number;
  /** Direct children (first `limit`, oldest first) and how many there are in all. */
  children: ItemRef[];
  childCount: number;
  /** Open dependencies of ancestors: they block this item too (API.md stage precedence). */
  ancestorBlockers: (ItemRef & { ancestorId: string })[];
  /**
   * Why the item is not ready, as the server's readiness rule sees it (server/domain/readiness.ts):
   * every condition that holds, the one that decides the stage first, each with what stands in
   * the way. Empty when the item is ready, released or cancelled.
   */
  waitingOn: WaitingOn[];
}

/** Child items listed under a waiting_on_children condition, at most. */
const WAITING_CHILDREN_SHOWN = 10;

export type WaitingOn =
  | { stage: "needs_attention"; requests: Pick<AttentionRequest, "id" | "question" | "workerId" | "createdAt">[] }
  | { stage: "leased"; lease: Pick<Lease, "id" | "workerId" | "epoch" | "expiresAt"> | null }
  | { stage: "waiting_on_children"; openChildCount: number; children: ItemRef[] }
  | { stage: "blocked"; dependencies: ItemRef[]; ancestorBlockers: (ItemRef & { ancestorId: string })[] }
  | { stage: "scheduled"; notBefore: string };

/** Everything around one item the work-item page needs to explain its stage and draw its graph. */
/** Rule 12 (projects scope tokens): a scoped caller sees neither an item of another project nor such neighbours (dependencies may cross projects). */
export async function itemNeighbourhood(db: Db, caller: Pick<Caller, "projects">, id: string, limit = 100): Promise<Neighbourhood> {
  await refuseItemOutsideScope(db, caller, id);
  const visible = inCallerScope(caller);
  const state = await selectWaiting(db, id);
  if (!state) throw notFound("work item", id);
  const [ancestors, dependencies, dependents, children, childCount, dependentCount] = await Promise.all([
    selectAncestors(db, id),
    selectBlockers(db, id, visible),
    selectDependents(db, id, limit, visible),
    selectChildren(db, id, limit),
    countChildren(db, id),
    countDependents(db, id, visible),
  ]);
  const ancestorIds = ancestors.map((ancestor) => ancestor.id);
  const ancestorBlockers = ancestorIds.length === 0 ? [] : await selectAncestorBlockers(db, ancestorIds, visible);
  const waitingOn: WaitingOn[] = [];
  for (const stage of state.waitingOn) {
    switch (stage) {
      case "needs_attention": {
        const requests = await selectOpenBlockingRequests(db, id);
        waitingOn.push({ stage, requests: requests.map((request) => ({ ...request, createdAt: new Date(request.createdAt).toISOString() })) });
        break;
      }
      case "leased":
        waitingOn.push({
          stage,
          lease: state.lease && { ...state.lease, epoch: Number(state.lease.epoch), expiresAt: new Date(state.lease.expiresAt).toISOString() },
        });
        break;
      case "waiting_on_children": {
        const openChildren = await selectChildren(db, id, WAITING_CHILDREN_SHOWN, true);
        waitingOn.push({ stage, openChildCount: Number(state.openChildCount), children: openChildren });
        break;
      }
      case "blocked":
        // The item's open dependencies: the ones of `dependencies` above (all of them, by id) that are not finished.
        waitingOn.push({ stage, dependencies: dependencies.filter((dependency) => !isTerminalStage(dependency.stage)), ancestorBlockers });
        break;
      case "scheduled":
        waitingOn.push({ stage, notBefore: new Date(state.notBefore!).toISOString() });
        break;
    }
  }
  return {
    ancestors: ancestors.map((row) => ({ ...row, depth: Number(row.depth) })),
    dependencies,
    dependents,
    dependentCount,
    children,
    childCount,
    ancestorBlockers,
    waitingOn,
  };
}
