/** Display helpers. Times are shown in the browser's time zone; their ISO form is in the title / dateTime. */

export function clockTime(iso: string | number): string {
  return new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

export function dateTime(iso: string): string {
  const date = new Date(iso);
  const today = new Date();
  const sameDay = date.toDateString() === today.toDateString();
  return sameDay
    ? clockTime(iso)
    : `${date.toLocaleDateString("en-GB", { day: "numeric", month: "short" })} ${clockTime(iso)}`;
}

/** A countdown: 4:05, 1:02:03. */
export function countdown(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${rest}` : `${m}:${rest}`;
}

/** A compact duration: 12s, 4m 05s, 2h 10m, 3d 4h. */
export function duration(milliseconds: number): string {
  const s = Math.max(0, Math.round(milliseconds / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  const d = Math.floor(h / 24);
  return `${d}d ${h % 24}h`;
}

export const humanize = (value: string) => value.replaceAll("_", " ");

/** Time until a moment: "in 45 s", "in 4 min", "in 2 h 5 min", "in 3 d"; "now" once it has come. */
export function startsIn(milliseconds: number): string {
  const s = Math.floor(milliseconds / 1000);
  if (s <= 0) return "now";
  if (s < 60) return `in ${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `in ${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 > 0 ? `in ${h} h ${m % 60} min` : `in ${h} h`;
  return `in ${Math.floor(h / 24)} d`;
}
