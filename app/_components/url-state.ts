"use client";

import { useState } from "react";

/**
 * A piece of page state mirrored in the query string (so a filtered view can be linked and
 * survives a reload) without a server round trip.
 */
export function useUrlState(name: string, initial: string): [string, (value: string) => void] {
  const [value, setValue] = useState(initial);
  return [
    value,
    (next: string) => {
      setValue(next);
      const url = new URL(window.location.href);
      if (next) url.searchParams.set(name, next);
      else url.searchParams.delete(name);
      window.history.replaceState(window.history.state, "", url);
    },
  ];
}
