"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { duration } from "./format";
import { useTRPC } from "./trpc";
import type { Outputs } from "./types";
import { ApiError, Loading, Section } from "./ui";

/*
 * Activity charts, drawn as plain SVG (docs/dashboard.md "Activity charts decision": no chart library). Each chart's SVG
 * only draws shapes and is hidden from assistive technology; its numbers are in a table that
 * screen readers read instead (visually hidden), and the axis labels are HTML so they stay
 * legible when the SVG stretches to a phone's width.
 */

type Activity = Outputs["dashboard"]["activity"];
type Bucket = Activity["buckets"][number];
type Range = Activity["range"];

const RANGES: { value: Range; label: string; interval: string }[] = [
  { value: "hour", label: "Last hour", interval: "5 minutes" },
  { value: "day", label: "Last day", interval: "hour" },
  { value: "week", label: "Last week", interval: "6 hours" },
];

const COUNT_SERIES = [
  { key: "claims", label: "Claims" },
  { key: "releases", label: "Releases" },
  { key: "expiries", label: "Expiries" },
  { key: "revocations", label: "Revocations" },
  { key: "attentionRequests", label: "Attention requests" },
] as const;

function tickLabel(iso: string, range: Range): string {
  const date = new Date(iso);
  const time = date.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", hour12: false });
  return range === "week" ? `${date.toLocaleDateString("en-GB", { weekday: "short" })} ${time}` : time;
}

/** Every chart draws into this box and scales uniformly to its width (round points, even strokes). */
const VIEW_WIDTH = 300;
const VIEW_HEIGHT = 100;
const y = (value: number, peak: number) => VIEW_HEIGHT - (value / peak) * (VIEW_HEIGHT - 4);

const seconds = (value: number | null) =>
  value === null ? "—" : value < 1 ? `${Math.round(value * 1000)} ms` : duration(value * 1000);

function Axis({ buckets, range }: { buckets: Bucket[]; range: Range }) {
  const middle = buckets[Math.floor(buckets.length / 2)]!;
  return (
    <div className="chart-axis" aria-hidden="true">
      <span>{tickLabel(buckets[0]!.start, range)}</span>
      <span>{tickLabel(middle.start, range)}</span>
      <span>now</span>
    </div>
  );
}

/** One series as bars, scaled to its own peak. */
function BarChart({ buckets, range, series, label }: { buckets: Bucket[]; range: Range; series: (typeof COUNT_SERIES)[number]["key"]; label: string }) {
  const values = buckets.map((bucket) => bucket[series]);
  const peak = Math.max(1, ...values);
  const total = values.reduce((sum, value) => sum + value, 0);
  const step = VIEW_WIDTH / buckets.length;
  return (
    <figure className="chart" data-testid={`chart-${series}`}>
      <figcaption>
        <span className="chart-title">{label}</span> <span className="chart-total">{total}</span>
      </figcaption>
      <div className="chart-plot">
        <span className="chart-peak" aria-hidden="true">{peak}</span>
        <svg viewBox={`0 0 ${VIEW_WIDTH} ${VIEW_HEIGHT}`} aria-hidden="true" focusable="false">
          <line x1="0" y1={VIEW_HEIGHT} x2={VIEW_WIDTH} y2={VIEW_HEIGHT} className="chart-baseline" vectorEffect="non-scaling-stroke" />
          {values.map((value, i) =>
            value > 0 ? (
              <rect key={i} x={i * step + step * 0.15} width={step * 0.7} y={y(value, peak)} height={VIEW_HEIGHT - y(value, peak)} className="chart-bar">
                <title>{`${tickLabel(buckets[i]!.start, range)}: ${value}`}</title>
              </rect>
            ) : null,
          )}
        </svg>
      </div>
      <Axis buckets={buckets} range={range} />
    </figure>
  );
}

/** p50 and p90 of a duration as two lines; an interval with no samples breaks the line. */
function PercentileChart({ buckets, range, p50, p90, label, testId }: {
  buckets: Bucket[];
  range: Range;
  p50: "readyToClaimP50" | "attentionWaitP50";
  p90: "readyToClaimP90" | "attentionWaitP90";
  label: string;
  testId: string;
}) {
  const peak = Math.max(1, ...buckets.map((bucket) => bucket[p90] ?? 0));
  const step = VIEW_WIDTH / buckets.length;
  const path = (key: typeof p50 | typeof p90) => {
    let d = "";
    let drawing = false;
    buckets.forEach((bucket, i) => {
      const value = bucket[key];
      if (value === null) {
        drawing = false;
        return;
      }
      d += `${drawing ? "L" : "M"}${i * step + step / 2} ${y(value, peak)} `;
      drawing = true;
    });
    return d.trim();
  };
  const points = (key: typeof p50 | typeof p90, className: string) =>
    buckets.map((bucket, i) => {
      const value = bucket[key];
      return value === null ? null : (
        <circle key={i} cx={i * step + step / 2} cy={y(value, peak)} r="2.5" className={className}>
          <title>{`${tickLabel(bucket.start, range)}: ${seconds(value)}`}</title>
        </circle>
      );
    });
  return (
    <figure className="chart chart-wide" data-testid={testId}>
      <figcaption>
        <span className="chart-title">{label}</span>
        <span className="chart-legend" aria-hidden="true">
          <span className="legend-p50">p50</span> <span className="legend-p90">p90</span>
        </span>
      </figcaption>
      <div className="chart-plot">
        <span className="chart-peak" aria-hidden="true">{seconds(peak)}</span>
        <svg viewBox={`0 0 ${VIEW_WIDTH} ${VIEW_HEIGHT}`} aria-hidden="true" focusable="false">
          <line x1="0" y1={VIEW_HEIGHT} x2={VIEW_WIDTH} y2={VIEW_HEIGHT} className="chart-baseline" vectorEffect="non-scaling-stroke" />
          <path d={path(p90)} className="chart-line-p90" vectorEffect="non-scaling-stroke" />
          <path d={path(p50)} className="chart-line-p50" vectorEffect="non-scaling-stroke" />
          {points(p90, "chart-point-p90")}
          {points(p50, "chart-point-p50")}
        </svg>
      </div>
      <Axis buckets={buckets} range={range} />
    </figure>
  );
}

/** The numbers behind the charts, for screen readers (the charts themselves are hidden from them). */
function ChartNumbers({ activity, caption, columns }: {
  activity: Activity;
  caption: string;
  columns: { label: string; value: (bucket: Bucket) => string | number }[];
}) {
  return (
    // A table ignores a 1px width, so the hiding wrapper is a div (or the table widens the page).
    <div className="visually-hidden">
    <table data-testid="activity-table">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Interval starting</th>
          {columns.map((column) => (
            <th scope="col" key={column.label}>{column.label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {activity.buckets.map((bucket) => (
          <tr key={bucket.start}>
            <th scope="row">
              <time dateTime={bucket.start}>{tickLabel(bucket.start, activity.range)}</time>
            </th>
            {columns.map((column) => (
              <td key={column.label}>{column.value(bucket)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  );
}

function RangePicker({ range, onChange }: { range: Range; onChange: (range: Range) => void }) {
  return (
    <div className="segmented" role="group" aria-label="Time range">
      {RANGES.map((option) => (
        <button key={option.value} type="button" aria-pressed={option.value === range} onClick={() => onChange(option.value)}>
          {option.label}
        </button>
      ))}
    </div>
  );
}

export function ActivityView() {
  const trpc = useTRPC();
  const [range, setRange] = useState<Range>("day");
  const query = useQuery(trpc.dashboard.activity.queryOptions({ range }));
  const activity = query.data?.range === range ? query.data : undefined;
  const interval = RANGES.find((option) => option.value === range)!.interval;
  return (
    <>
      <div className="page-head">
        <h1>Activity</h1>
        <RangePicker range={range} onChange={setRange} />
      </div>
      {query.error ? <ApiError error={query.error} /> : null}
      {!activity ? (
        <Loading what="activity" />
      ) : (
        <>
          <Section title={`Lease and attention events per ${interval}`} id="activity-counts">
            <div className="chart-grid">
              {COUNT_SERIES.map(({ key, label }) => (
                <BarChart key={key} buckets={activity.buckets} range={range} series={key} label={label} />
              ))}
            </div>
            <ChartNumbers
              activity={activity}
              caption={`Lease and attention events per ${interval}, ${RANGES.find((option) => option.value === range)!.label.toLowerCase()}`}
              columns={COUNT_SERIES.map(({ key, label }) => ({ label, value: (bucket) => bucket[key] }))}
            />
          </Section>
          <Section title="Waiting times" id="activity-waits">
            <dl className="wait-totals">
              <div>
                <dt>Ready → claimed</dt>
                <dd>
                  p50 {seconds(activity.totals.readyToClaimP50)} · p90 {seconds(activity.totals.readyToClaimP90)}
                </dd>
              </div>
              <div>
                <dt>Attention answered after</dt>
                <dd>
                  p50 {seconds(activity.totals.attentionWaitP50)} · p90 {seconds(activity.totals.attentionWaitP90)}
                </dd>
              </div>
            </dl>
            <div className="chart-grid chart-grid-wide">
              <PercentileChart buckets={activity.buckets} range={range} p50="readyToClaimP50" p90="readyToClaimP90" label="Time from ready to claimed" testId="chart-ready-to-claim" />
              <PercentileChart buckets={activity.buckets} range={range} p50="attentionWaitP50" p90="attentionWaitP90" label="Time an attention request waited for its answer" testId="chart-attention-wait" />
            </div>
            <ChartNumbers
              activity={activity}
              caption={`Waiting times per ${interval} (claims and answers in the interval)`}
              columns={[
                { label: "Ready to claimed, p50", value: (bucket) => seconds(bucket.readyToClaimP50) },
                { label: "Ready to claimed, p90", value: (bucket) => seconds(bucket.readyToClaimP90) },
                { label: "Attention wait, p50", value: (bucket) => seconds(bucket.attentionWaitP50) },
                { label: "Attention wait, p90", value: (bucket) => seconds(bucket.attentionWaitP90) },
              ]}
            />
          </Section>
        </>
      )}
    </>
  );
}
