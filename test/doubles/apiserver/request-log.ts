/** One served request, as tests and benchmarks read it from `sim.requests`. */
export interface RequestRecord {
  /** Start time, ms since the epoch. */
  readonly time: number;
  readonly user: string;
  readonly groups: readonly string[];
  readonly method: string;
  /** Path with query string. */
  readonly path: string;
  readonly verb: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  /** HTTP status code (200 for a watch stream that started). */
  readonly code: number;
  readonly watch: boolean;
  /** Time to the response head (not the stream's length for watches). */
  readonly durationMs: number;
}

export interface Counters {
  requests: number;
  byVerb: Record<string, number>;
  byCode: Record<string, number>;
  watchesStarted: number;
}

export function countRequests(rs: readonly RequestRecord[]): Counters {
  const c: Counters = { requests: 0, byVerb: {}, byCode: {}, watchesStarted: 0 };
  for (const r of rs) {
    c.requests++;
    c.byVerb[r.verb] = (c.byVerb[r.verb] ?? 0) + 1;
    c.byCode[String(r.code)] = (c.byCode[String(r.code)] ?? 0) + 1;
    if (r.watch) c.watchesStarted++;
  }
  return c;
}
