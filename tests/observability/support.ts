import parsePrometheusTextFormat, { type MetricFamily } from "parse-prometheus-text-format";

/** GET /api/metrics with `token`, parsed by a Prometheus text-format parser. */
export async function scrape(baseUrl: string, token?: string) {
  const response = await fetch(`${baseUrl}/api/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    text,
    families: response.ok ? parsePrometheusTextFormat(text) : [],
  };
}

const matches = (labels: Record<string, string> | undefined, wanted: Record<string, string>) =>
  Object.entries(wanted).every(([key, value]) => labels?.[key] === value);

export type Scrape = { text: string; families: MetricFamily[] };

/**
 * A counter's or gauge's value for `labels` (0 when the series is absent); a histogram's sample
 * count. The parser folds a histogram's series into one and drops their labels, so a labelled
 * histogram's `_count` lines are parsed again on their own, as an untyped family.
 */
export function sample(scraped: Scrape, name: string, labels: Record<string, string> = {}): number {
  const family = scraped.families.find((candidate) => candidate.name === name);
  if (!family) throw new Error(`metric ${name} missing from the scrape`);
  const series = family.type === "HISTOGRAM"
    ? parsePrometheusTextFormat(
        [`# TYPE ${name}_count untyped`, ...scraped.text.split("\n").filter((line) => line.startsWith(`${name}_count`)), ""].join("\n"),
      )[0]?.metrics ?? []
    : family.metrics;
  const found = series.find((metric) => matches(metric.labels, labels));
  return found ? Number(found.value) : 0;
}
