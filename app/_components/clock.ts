"use client";

import { useSyncExternalStore } from "react";

/*
 * The database clock as the browser sees it. Every time decision in Work Graph uses the
 * database clock, so countdowns are computed from server-provided times against
 * `browser now + offset`, where offset = dashboard.summary().now − the moment its answer
 * arrived. A browser clock that is minutes off still shows the right time left.
 */

let offsetMs = 0;
let current: number | null = null;
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

/** Records one observation of the database clock (`serverIso`) received at browser time `receivedAt` (ms). */
export function observeServerClock(serverIso: string, receivedAt: number): void {
  const observed = Date.parse(serverIso) - receivedAt;
  if (!Number.isFinite(observed)) return;
  offsetMs = observed;
  publish();
}

/** Database time now, estimated from the browser clock and the last observed offset. */
export function serverNow(): number {
  return Date.now() + offsetMs;
}

export function clockOffsetMs(): number {
  return offsetMs;
}

function publish() {
  current = serverNow();
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  if (!timer) {
    current = serverNow();
    timer = setInterval(publish, 1_000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/**
 * Database time, re-rendering the caller once a second. Null during server rendering and
 * hydration (times are only drawn in the browser, so server and client HTML agree).
 */
export function useServerNow(): number | null {
  return useSyncExternalStore(
    subscribe,
    () => current,
    () => null,
  );
}
