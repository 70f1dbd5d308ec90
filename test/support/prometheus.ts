/** Reads one series out of a Prometheus text exposition (what a scraper sees). */
export function seriesValue(text: string, series: string): number {
  const escaped = series.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const match = new RegExp(`^${escaped} (\\S+)$`, "m").exec(text);
  return match?.[1] === undefined ? Number.NaN : Number(match[1]);
}
