"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useProjectId } from "./project";
import { useTRPC } from "./trpc";

const OPT_IN_KEY = "work-graph:attention-notifications";

type Permission = NotificationPermission | "unsupported";

const currentPermission = (): Permission => (typeof Notification === "undefined" ? "unsupported" : Notification.permission);

/**
 * For a person with the inbox in a background tab: the open count in the tab title, and —
 * once they opt in — a browser notification for each request that arrives while the page is
 * open. Opt-in is remembered in this browser (localStorage); requests already open when the
 * page loads do not notify.
 */
export function AttentionAlerts() {
  const trpc = useTRPC();
  const open = useQuery(trpc.dashboard.inbox.queryOptions({ projectId: useProjectId(), status: "open", limit: 200 }));
  const [permission, setPermission] = useState<Permission>("default");
  const [optedIn, setOptedIn] = useState(false);
  const seen = useRef<Set<string> | null>(null);

  useEffect(() => {
    setPermission(currentPermission());
    setOptedIn(window.localStorage.getItem(OPT_IN_KEY) === "on");
  }, []);

  const count = open.data?.length;
  useEffect(() => {
    if (count === undefined) return;
    const base = document.title.replace(/^\(\d+\+?\) /, "");
    document.title = count > 0 ? `(${count === 200 ? "200+" : count}) ${base}` : base;
  }, [count]);
  useEffect(() => () => {
    document.title = document.title.replace(/^\(\d+\+?\) /, "");
  }, []);

  useEffect(() => {
    if (!open.data) return;
    const ids = new Set(open.data.map((request) => request.id));
    const before = seen.current;
    seen.current = ids;
    if (!before || !optedIn || currentPermission() !== "granted") return;
    for (const request of open.data) {
      if (before.has(request.id)) continue;
      const notification = new Notification(`${request.workerId} asks${request.blocking ? " (blocking)" : ""}`, {
        body: `${request.question}\n— ${request.workItemTitle}`,
        tag: `attention-${request.id}`,
      });
      notification.onclick = () => {
        window.focus();
        notification.close();
      };
    }
  }, [open.data, optedIn]);

  const enable = async () => {
    const result = await Notification.requestPermission();
    setPermission(result);
    if (result === "granted") {
      window.localStorage.setItem(OPT_IN_KEY, "on");
      setOptedIn(true);
    }
  };
  const disable = () => {
    window.localStorage.removeItem(OPT_IN_KEY);
    setOptedIn(false);
  };

  if (permission === "unsupported") return null;
  return (
    <div className="attention-alerts" data-testid="attention-alerts">
      {permission === "denied" ? (
        <span className="muted">Notifications are blocked for this site in the browser settings.</span>
      ) : optedIn && permission === "granted" ? (
        <>
          <span>Notifying you of new requests.</span>{" "}
          <button type="button" className="button-quiet button-small" onClick={disable}>
            Turn off
          </button>
        </>
      ) : (
        <button type="button" className="button-small" onClick={() => void enable()}>
          Notify me of new requests
        </button>
      )}
    </div>
  );
}
