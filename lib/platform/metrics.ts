/** How long after the last answer API traffic still counts as going on. */
const API_QUIET_MS = 10;

/** In-process counters rendered as Prometheus text for /metrics. */
export class Metrics {
  readonly #requests = new Map<string, number>();
  readonly #durationSumMs = new Map<string, number>();
  readonly #sweeps = new Map<string, number>();
  readonly #sweepErrors = new Map<string, number>();
  readonly #jobFailures = new Map<string, number>();
  /** When each worker loop's sweep in flight began (performance.now()); absent between sweeps. */
  readonly #sweepingSince = new Map<string, number>();
  readonly #connectionsRefused = new Map<string, number>();
  #headerTimeouts = 0;
  #inFlight = 0;
  #lastFinishedAt = -Infinity;

  /** Requests being answered right now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * True while requests are answered or one finished within the last 10 ms: background work
   * yields to API traffic, and keep-alive clients leave gaps between a response and their next
   * request that must not look like idleness.
   */
  get apiBusy(): boolean {
    return this.#inFlight > 0 || performance.now() - this.#lastFinishedAt < API_QUIET_MS;
  }

  requestStarted(): void {
    this.#inFlight++;
  }

  requestFinished(): void {
    this.#inFlight--;
    this.#lastFinishedAt = performance.now();
  }

  /** Counts one answered request by surface and status. */
  recordRequest(surface: string, status: number, durationMs: number): void {
    const key = `surface="${surface}",status="${status}"`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    this.#durationSumMs.set(surface, (this.#durationSumMs.get(surface) ?? 0) + durationMs);
  }

  /** A worker loop began a sweep. */
  workerSweepStarted(worker: string): void {
    this.#sweepingSince.set(worker, performance.now());
  }

  /** The worker loops whose sweep in flight began more than `stallMs` ago: they are stuck. */
  stalledWorkers(stallMs: number): string[] {
    const now = performance.now();
    return [...this.#sweepingSince].filter(([, since]) => now - since > stallMs).map(([name]) =>
      name
    ).sort();
  }

  /** Counts one sweep of a worker loop, and whether it failed. */
  workerSwept(worker: string, succeeded: boolean): void {
    this.#sweepingSince.delete(worker);
    const key = `worker="${worker}"`;
    this.#sweeps.set(key, (this.#sweeps.get(key) ?? 0) + 1);
    this.#sweepErrors.set(key, (this.#sweepErrors.get(key) ?? 0) + (succeeded ? 0 : 1));
  }

  /** Counts a connection closed at once because a connection limit was reached. */
  connectionRefused(limit: "per_address" | "total"): void {
    const key = `limit="${limit}"`;
    this.#connectionsRefused.set(key, (this.#connectionsRefused.get(key) ?? 0) + 1);
  }

  /** Counts a request closed because its headers were not complete in HEADER_TIMEOUT_MS. */
  headerTimedOut(): void {
    this.#headerTimeouts += 1;
  }

  /** Counts one failed scheduled job by kind and what became of it (retried or parked). */
  jobFailed(kind: string, outcome: "retried" | "parked"): void {
    const key = `kind="${kind}",outcome="${outcome}"`;
    this.#jobFailures.set(key, (this.#jobFailures.get(key) ?? 0) + 1);
  }

  /** Prometheus exposition text; `gauges` adds values read at scrape time. */
  render(
    gauges: Record<string, { help: string; samples: [labels: string, value: number][] }>,
  ): string {
    const lines = [
      "# HELP http_requests_total Requests answered, by surface and status.",
      "# TYPE http_requests_total counter",
      ...[...this.#requests].map(([labels, n]) => `http_requests_total{${labels}} ${n}`),
      "# HELP http_request_duration_ms_sum Total time spent answering, by surface.",
      "# TYPE http_request_duration_ms_sum counter",
      ...[...this.#durationSumMs].map(([surface, ms]) =>
        `http_request_duration_ms_sum{surface="${surface}"} ${ms.toFixed(3)}`
      ),
      ...counter(
        "http_connections_refused_total",
        "Connections closed on arrival because a connection limit was reached, by limit.",
        this.#connectionsRefused,
      ),
      "# HELP http_header_timeouts_total Requests closed because their headers were not complete within HEADER_TIMEOUT_MS.",
      "# TYPE http_header_timeouts_total counter",
      `http_header_timeouts_total ${this.#headerTimeouts}`,
      ...counter("worker_sweeps_total", "Sweeps run by each worker loop.", this.#sweeps),
      ...counter(
        "worker_sweep_errors_total",
        "Sweeps of each worker loop that failed (logged; the next tick sweeps again).",
        this.#sweepErrors,
      ),
      ...counter(
        "scheduled_job_failures_total",
        "Scheduled jobs that failed, by kind and outcome (retried later or parked).",
        this.#jobFailures,
      ),
    ];
    for (const [name, gauge] of Object.entries(gauges)) {
      lines.push(`# HELP ${name} ${gauge.help}`, `# TYPE ${name} gauge`);
      for (const [labels, value] of gauge.samples) {
        lines.push(`${name}${labels ? `{${labels}}` : ""} ${value}`);
      }
    }
    return lines.join("\n") + "\n";
  }
}

function counter(name: string, help: string, samples: Map<string, number>): string[] {
  return [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} counter`,
    ...[...samples].map(([labels, n]) => `${name}{${labels}} ${n}`),
  ];
}
