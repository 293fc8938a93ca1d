/**
 * The one worker loop of the service: the scheduler, the webhook dispatcher and the notification
 * sender each run their sweep on it. One sweep at a time; a sweep's error is caught, logged as one
 * JSON line with the worker's name and counted in /metrics, and the next tick sweeps again, so a
 * database that fails for a moment never ends the process.
 */
import type { Metrics } from "../lib/platform/metrics.ts";

export interface WorkerLoopOptions {
  /** Names the worker in logs, metrics and its Deno.cron job. */
  readonly name: string;
  /** One pass over the worker's due work; may throw. */
  readonly sweep: () => Promise<unknown>;
  /** How often the in-process timer ticks. */
  readonly intervalMs: number;
  readonly metrics?: Metrics;
  /** Where the failure line goes; stderr by default. */
  readonly log?: (entry: Record<string, unknown>) => void;
}

/** Deno.cron runs a tick each minute as well, when the service runs with --unstable-cron. */
const CRON_SCHEDULE = "* * * * *";

type Cron = (
  name: string,
  schedule: string,
  options: { signal: AbortSignal },
  handler: () => Promise<void>,
) => Promise<void>;

const logToStderr = (entry: Record<string, unknown>) => console.error(JSON.stringify(entry));

export class WorkerLoop {
  readonly #options: WorkerLoopOptions;
  readonly #log: (entry: Record<string, unknown>) => void;
  #timer: ReturnType<typeof setInterval> | null = null;
  #cron: AbortController | null = null;
  #ticking: Promise<void> | null = null;
  #stopped = false;

  constructor(options: WorkerLoopOptions) {
    this.#options = options;
    this.#log = options.log ?? logToStderr;
  }

  /** Ticks every `intervalMs`, and each minute from Deno.cron when available. */
  start(): void {
    if (this.#timer !== null) throw new Error(`worker ${this.#options.name} already started`);
    this.#stopped = false;
    this.#timer = setInterval(() => void this.tick(), this.#options.intervalMs);
    const cron = (Deno as { cron?: Cron }).cron;
    if (typeof cron === "function") {
      // Deno.cron needs --unstable-cron; without it the timer alone drives the worker.
      this.#cron = new AbortController();
      cron(
        `${this.#options.name}-sweep`,
        CRON_SCHEDULE,
        { signal: this.#cron.signal },
        () => this.tick(),
      ).catch(() => {});
    }
  }

  /**
   * Runs one sweep, or joins the one in flight; never rejects. After stop() it does nothing.
   */
  tick(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#ticking ??= this.#sweepOnce().finally(() => {
      this.#ticking = null;
    });
    return this.#ticking;
  }

  /** Stops ticking and waits for the sweep in flight to end. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#cron?.abort();
    this.#cron = null;
    if (this.#ticking) await this.#ticking;
  }

  async #sweepOnce(): Promise<void> {
    const { name, metrics } = this.#options;
    metrics?.workerSweepStarted(name);
    try {
      await this.#options.sweep();
      metrics?.workerSwept(name, true);
    } catch (error) {
      metrics?.workerSwept(name, false);
      this.#log({
        level: "error",
        msg: "worker sweep failed",
        worker: name,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
