"use client";

import Link from "next/link";
import { Fragment, type ReactNode } from "react";
import { useServerNow } from "./clock";
import { clockTime, countdown, dateTime, duration, humanize, startsIn } from "./format";
import { describeError } from "./trpc";
import { itemHref } from "@work-graph/contract";

/** An item's stage; a scheduled item's also says when it becomes claimable ("in 4 min"), given its notBefore. */
export function StageBadge({ stage, notBefore }: { stage: string; notBefore?: string | null }) {
  const badge = (
    <span className={`badge stage-${stage}`} data-stage={stage}>
      {humanize(stage)}
    </span>
  );
  if (stage !== "scheduled" || !notBefore) return badge;
  return (
    <span className="stage-with-time">
      {badge} <StartsIn at={notBefore} />
    </span>
  );
}

/** Time until `at` on the database clock ("in 4 min"), ticking; the absolute time on hover. */
export function StartsIn({ at }: { at: string }) {
  const now = useServerNow();
  return (
    <time dateTime={at} title={at} className="starts-in" data-testid="starts-in">
      {now === null ? "…" : startsIn(Date.parse(at) - now)}
    </time>
  );
}

/** Capabilities (an item's requires, a worker's or a token's capabilities), each a token; "—" or `none` when empty. */
export function Capabilities({ list, none = "—" }: { list: readonly string[]; none?: string }) {
  if (list.length === 0) return <span className="muted">{none}</span>;
  return (
    <span className="capabilities">
      {list.map((capability, index) => (
        <Fragment key={capability}>
          {index > 0 ? ", " : null}
          <span className="token">
            <code className="capability" title={capability}>
              {capability}
            </code>
          </span>
        </Fragment>
      ))}
    </span>
  );
}

export function OutcomeBadge({ outcome }: { outcome: string | null }) {
  if (!outcome) return <span className="badge outcome-live" data-outcome="live">live</span>;
  return (
    <span className={`badge outcome-${outcome}`} data-outcome={outcome}>
      {humanize(outcome)}
    </span>
  );
}

/**
 * A name the dashboard shows but nobody wrote as prose: an id, a worker, an actor, an event type.
 * It never breaks inside a word; when it is longer than its place it ends in an ellipsis, and its
 * title shows it whole on hover.
 */
export function Token({ text, code = false, className }: { text: string; code?: boolean; className?: string }) {
  const Tag = code ? "code" : "span";
  return (
    <span className="token">
      <Tag className={className} title={text}>
        {text}
      </Tag>
    </span>
  );
}

/** Who did something: a signed-in person by name (their actor in the tooltip), anyone else by actor. */
export function Who({ actor, name }: { actor: string; name?: string | null }) {
  if (!name) return <Token text={actor} />;
  return (
    <bdi className="person" title={actor}>
      {name}
    </bdi>
  );
}

/** An item's title linking to its page, then its id. */
export function ItemLink({ id, title }: { id: string; title: string }) {
  return (
    <>
      <Link href={itemHref(id)}>{title}</Link> <Token text={id} code className="id" />
    </>
  );
}

/** An item's id linking to its page (where its title is not at hand). */
export function ItemIdLink({ id }: { id: string }) {
  return (
    <Link href={itemHref(id)}>
      <Token text={id} />
    </Link>
  );
}

export function WorkerId({ id }: { id: string }) {
  return <Token text={id} className="worker" />;
}

/** An absolute time (browser time zone), full ISO in the tooltip. */
export function Time({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={iso}>
      {dateTime(iso)}
    </time>
  );
}

/** "4 min ago", ticking, from the database clock. */
export function Age({ since, suffix = " ago" }: { since: string; suffix?: string }) {
  const now = useServerNow();
  return (
    <time dateTime={since} title={since} className="age">
      {now === null ? "…" : `${duration(now - Date.parse(since))}${suffix}`}
    </time>
  );
}

/** Live time left until `expiresAt`, corrected for the browser/database clock offset; marked under a minute. */
export function Countdown({ expiresAt }: { expiresAt: string }) {
  const now = useServerNow();
  if (now === null) return <span className="countdown">…</span>;
  const seconds = Math.max(0, (Date.parse(expiresAt) - now) / 1000);
  const state = seconds <= 0 ? "expired" : seconds < 60 ? "soon" : "ok";
  return (
    <span className={`countdown countdown-${state}`} data-seconds-left={Math.floor(seconds)} title={`expires at ${clockTime(expiresAt)}`}>
      {state === "expired" ? "expired" : countdown(seconds)}
      {state === "soon" ? <span className="badge badge-warn">expires soon</span> : null}
    </span>
  );
}

/** A refused call, with its API reason (e.g. ITEM_LEASED) and message. */
export function ApiError({ error }: { error: unknown }) {
  if (!error) return null;
  const { reason, message } = describeError(error);
  return (
    <p className="error" role="alert">
      <strong className="reason">{reason}</strong> {message}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return <p className="muted" aria-busy="true">Loading {what}…</p>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export function Section({ title, id, actions, children }: { title: string; id: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="panel" aria-labelledby={id}>
      <div className="panel-head">
        <h2 id={id}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}
