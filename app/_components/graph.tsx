"use client";

import type { Neighbourhood, WorkItem } from "./types";
import { humanize } from "./format";
import { Token } from "./ui";
import { itemHref } from "@work-graph/contract";

/*
 * The item's neighbourhood as SVG: parent above, children below, blockers (its
 * dependencies) on the left, dependents on the right. Arrows point from the item that must
 * finish first to the item that waits for it. Every other node links to its page.
 */

const W = 156;
const H = 60;
const GAP_X = 24;
const GAP_Y = 34;
const ROW = H + 14;
const MAX_SIDE = 6;
const MAX_CHILDREN = 6;
const span = (columns: number) => (columns <= 0 ? 0 : columns * W + (columns - 1) * GAP_X);

interface Node {
  id: string;
  title: string;
  stage: string;
  x: number;
  y: number;
  role: string;
}

/** Splits a title into at most two lines of about `width` characters (the second one is clipped if longer). */
function wrap(title: string, width = 19): [string, string] {
  const words = title.split(/\s+/);
  let first = "";
  let index = 0;
  while (index < words.length && (first.length === 0 || first.length + 1 + words[index]!.length <= width)) {
    first = first ? `${first} ${words[index]}` : words[index]!;
    index += 1;
  }
  return [first, words.slice(index).join(" ")];
}

/**
 * One node. Long titles are cut by a clip path rather than shortened, so a link's accessible
 * name (its text) is the full title, stage and id.
 */
function NodeBox({ node, index, center }: { node: Node; index: string; center?: boolean }) {
  const clipId = `node-clip-${index}`;
  const [line1, line2] = wrap(node.title);
  const body = (
    <g className={`node stage-${node.stage} ${center ? "node-center" : ""}`}>
      <clipPath id={clipId}>
        <rect x={node.x + 6} y={node.y} width={W - 12} height={H} />
      </clipPath>
      <rect x={node.x} y={node.y} width={W} height={H} rx={8} />
      <g clipPath={`url(#${clipId})`}>
        <text x={node.x + 10} y={node.y + 18} className="node-title">
          <tspan>{line1}</tspan>
          {line2 ? (
            <tspan x={node.x + 10} dy={15}>
              {line2}
            </tspan>
          ) : null}
        </text>
      </g>
      {/* HTML, so an id longer than the node ends in an ellipsis, with the whole id on hover. */}
      <foreignObject x={node.x + 10} y={node.y + H - 22} width={W - 20} height={18}>
        <div className="node-meta">
          <span className="node-stage">{humanize(node.stage)}</span> · <Token text={node.id} />
        </div>
      </foreignObject>
    </g>
  );
  if (center) return body;
  return (
    <a href={itemHref(node.id)} data-role={node.role}>
      {body}
    </a>
  );
}

export function NeighbourhoodGraph({ item, around }: { item: WorkItem; around: Neighbourhood }) {
  const parent = around.ancestors[0];
  const blockers = around.dependencies.slice(0, MAX_SIDE);
  const dependents = around.dependents.slice(0, MAX_SIDE);
  const children = around.children.slice(0, MAX_CHILDREN);
  const top = parent ? H + GAP_Y : 0;
  const sideRows = Math.max(blockers.length, dependents.length, 1);
  const middleHeight = sideRows * ROW - (ROW - H);
  const centerY = top + (middleHeight - H) / 2;
  const childTop = top + middleHeight + GAP_Y;
  // Only the columns in use: blockers | item | dependents; children in rows of up to three.
  const sideColumns = 1 + (blockers.length > 0 ? 1 : 0) + (dependents.length > 0 ? 1 : 0);
  const perRow = Math.min(3, Math.max(sideColumns, 2), children.length);
  const width = Math.max(span(sideColumns), span(perRow));
  const centerX = (width - span(sideColumns)) / 2 + (blockers.length > 0 ? W + GAP_X : 0);
  const childRows = perRow === 0 ? 0 : Math.ceil(children.length / perRow);
  const moreNotes = [
    around.dependencies.length > MAX_SIDE ? `+${around.dependencies.length - MAX_SIDE} more blockers` : null,
    around.dependents.length > MAX_SIDE ? `+${around.dependents.length - MAX_SIDE} more dependents` : null,
    around.childCount > MAX_CHILDREN ? `+${around.childCount - MAX_CHILDREN} more children` : null,
  ].filter(Boolean);
  const height = children.length > 0 ? childTop + childRows * ROW - (ROW - H) : top + middleHeight;
  const stackTop = (count: number) => top + (middleHeight - (count * ROW - (ROW - H))) / 2;

  const center: Node = { id: item.id, title: item.title, stage: item.stage, x: centerX, y: centerY, role: "this item" };
  const parentNode: Node | null = parent ? { ...parent, x: centerX, y: 0, role: "Parent" } : null;
  const blockerNodes = blockers.map((b, i) => ({ ...b, x: centerX - W - GAP_X, y: stackTop(blockers.length) + i * ROW, role: "Blocker" }));
  const dependentNodes = dependents.map((d, i) => ({ ...d, x: centerX + W + GAP_X, y: stackTop(dependents.length) + i * ROW, role: "Dependent" }));
  const childNodes = children.map((c, i) => {
    const row = Math.floor(i / perRow);
    const inRow = Math.min(perRow, children.length - row * perRow);
    return { ...c, x: (width - span(inRow)) / 2 + (i % perRow) * (W + GAP_X), y: childTop + row * ROW, role: "Child" };
  });

  const description = [
    parent ? `parent ${parent.id}` : "no parent",
    `${around.dependencies.length} blocker(s)`,
    `${around.dependents.length} dependent(s)`,
    `${around.childCount} child(ren)`,
  ].join(", ");

  return (
    <figure className="graph">
      <div className="graph-scroll" tabIndex={0} role="region" aria-label="Neighbourhood graph (scrolls sideways on narrow screens)">
      <svg viewBox={`-2 -2 ${width + 4} ${height + 4}`} width={width + 4} height={height + 4} role="group" aria-label={`Neighbourhood of ${item.id}: ${description}`} data-testid="neighbourhood-graph">
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="arrowhead" />
          </marker>
        </defs>
        <g className="edges" aria-hidden="true">
          {parentNode ? <line x1={parentNode.x + W / 2} y1={parentNode.y + H} x2={center.x + W / 2} y2={center.y} className="edge edge-tree" /> : null}
          {childNodes.map((c) => (
            <line key={c.id} x1={center.x + W / 2} y1={center.y + H} x2={c.x + W / 2} y2={c.y} className="edge edge-tree" />
          ))}
          {blockerNodes.map((b) => (
            <line key={b.id} x1={b.x + W} y1={b.y + H / 2} x2={center.x - 2} y2={center.y + H / 2} className="edge edge-dep" markerEnd="url(#arrow)" />
          ))}
          {dependentNodes.map((d) => (
            <line key={d.id} x1={center.x + W} y1={center.y + H / 2} x2={d.x - 2} y2={d.y + H / 2} className="edge edge-dep" markerEnd="url(#arrow)" />
          ))}
        </g>
        {parentNode ? <NodeBox node={parentNode} index="p" /> : null}
        {blockerNodes.map((n, i) => <NodeBox key={n.id} node={n} index={`b${i}`} />)}
        {dependentNodes.map((n, i) => <NodeBox key={n.id} node={n} index={`d${i}`} />)}
        {childNodes.map((n, i) => <NodeBox key={n.id} node={n} index={`c${i}`} />)}
        <NodeBox node={center} index="self" center />
      </svg>
      </div>
      <figcaption className="hint">
        Parent above, children below, blockers left, dependents right; arrows point from what must finish first.
        {moreNotes.length > 0 ? ` (${moreNotes.join(", ")})` : ""}
      </figcaption>
    </figure>
  );
}
