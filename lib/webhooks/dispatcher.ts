/**
 * The webhook dispatcher: claims due deliveries from the database with a lease, sends each as a
 * signed POST (10 s timeout, redirects not followed), and records every attempt. Network waits
 * happen outside write units, so a slow endpoint never holds the writer. A slow or dead endpoint
 * delays only itself: attempts to one endpoint are capped (its slots), every attempt starts as it
 * is claimed and is recorded as it ends, a sweep goes on claiming while it waits, and it leaves an
 * attempt that outlasts `attemptWaitMs` to end in the background, still holding its endpoint's
 * slot. Every claim round takes from both environments. An endpoint whose attempts have all failed
 * for an hour gets one probe at a time (circuit.ts).
 */
import { pinnedFetch } from "./pinned_fetch.ts";
import type { Clock } from "../platform/clock.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { Environment } from "../platform/config.ts";
import { surfaceAEnvelope, surfaceBEnvelope } from "./payloads.ts";
import { signDelivery, signEnvelope } from "./signing.ts";
import { webhookSigningKeys } from "./ed25519_key.ts";
import { checkEndpointUrl, type HostResolver, resolveEndpointHost } from "./endpoint_url.ts";
import { circuitAt } from "./circuit.ts";
import {
  anyDeliveryDue,
  type AttemptOutcome,
  type AttemptResult,
  claimDeliveries,
  type ClaimedDelivery,
  dueDeliveries,
  type DueDelivery,
  extendClaims,
  recordAttempts,
  releaseClaims,
} from "./delivery_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Database } from "../../db/client.ts";
import { WorkerLoop } from "../../db/worker_loop.ts";
import type { Metrics } from "../platform/metrics.ts";
import { untilDurable } from "../platform/durability.ts";

export interface DispatcherOptions {
  readonly batchSize: number;
  /** With perEndpointConcurrency, how many attempts a sweep keeps working at once. */
  readonly endpointsInParallel: number;
  /** Attempts in flight to one endpoint at most (its slots), so a slow one holds only its own. */
  readonly perEndpointConcurrency: number;
  readonly timeoutMs: number;
  /**
   * How long a claim keeps other sweeps away from a delivery (a crash releases it after); a
   * delivery waiting for a slot has its claim extended. It must outlast an attempt started just
   * before the next extension: at least leaseFloorMs(timeoutMs).
   */
  readonly leaseMs: number;
  /** How long a sweep waits on one attempt before leaving it to end in the background. */
  readonly attemptWaitMs?: number;
  readonly fetch?: typeof fetch;
  /** Resolves a host name to its addresses (A and AAAA); Deno.resolveDns by default. */
  readonly resolve?: HostResolver;
  readonly random?: () => number;
  /** True while API requests are in flight: then attempts start one at a time, paced. */
  readonly apiBusy?: () => boolean;
  /** An expiring signed link to a signed document, for Surface A's DocumentLink. */
  readonly documentLink?: (environment: Environment, signedDocumentId: string) => Promise<string>;
  /** Where a disabled endpoint is logged, one JSON object; stderr by default. */
  readonly log?: (entry: Record<string, unknown>) => void;
}

/** A sweep waits this long at most on one attempt; a slower one ends in the background. */
export const ATTEMPT_WAIT_IN_SWEEP_MS = 2_000;

/**
 * While a sweep waits on attempts it claims again this often, so that a delivery falling due
 * meanwhile (another tenant's, say) starts at once.
 */
const CLAIM_TICK_MS = 100;

/**
 * How long outcomes gather before their unit: a commit blocks the thread for an fsync, so under
 * API traffic they gather longer.
 */
const RECORD_WINDOW_MS = 10;
const BUSY_RECORD_WINDOW_MS = 50;

/** Deliveries claimed at a time while API requests are in flight. */
const BUSY_BATCH_SIZE = 8;

/** Under API traffic the next attempt starts this long after the previous one at least. */
const BUSY_PACE_MS = 5;

/**
 * Under API traffic the next attempt waits for the previous one to end, but a tenth of the
 * timeout at most and never more than this: a receiver slower than that keeps the attempt waiting
 * on the network, not on the CPU requests need.
 */
const BUSY_ATTEMPT_WAIT_MS_MAX = 200;

/** How long, under API traffic, the next attempt waits at most for the previous one to end. */
function busyAttemptWaitMs(timeoutMs: number): number {
  return Math.min(BUSY_ATTEMPT_WAIT_MS_MAX, Math.floor(timeoutMs / 10));
}

/** The longest a claimed delivery waits for its attempt to start (a busy claim, one at a time). */
export function startDelayMsMax(timeoutMs: number): number {
  return BUSY_BATCH_SIZE * (busyAttemptWaitMs(timeoutMs) + BUSY_PACE_MS);
}

/**
 * A healthy endpoint gets this many rounds of its slots claimed at once, so that one claim (a unit
 * and an fsync) serves many attempts.
 */
const CLAIM_AHEAD_ROUNDS = 8;

/**
 * A lease outlasts the attempt's start and its timeout by a margin for its record (a window of
 * 50 ms at most, then one unit): the timeout itself, within these bounds. A record held up longer,
 * behind a node killed while it held the primary's write lock, may see the delivery claimed again
 * and sent once more (delivery is at least once).
 */
const LEASE_MARGIN_MS_MIN = 500;
const LEASE_MARGIN_MS_MAX = 1_000;

/**
 * The shortest lease a claim may have: the next unit that extends leases may come one timeout
 * later (an attempt's end brings one), then the delivery waits its start delay, runs its timeout,
 * and is recorded within the margin. With the default 10 s timeout: 22,640 ms; with 500 ms: 1,940.
 */
export function leaseFloorMs(timeoutMs: number): number {
  const marginMs = Math.min(LEASE_MARGIN_MS_MAX, Math.max(LEASE_MARGIN_MS_MIN, timeoutMs));
  return 2 * timeoutMs + startDelayMsMax(timeoutMs) + marginMs;
}

/** The claim lease a node runs with: three timeouts, never less than the floor. */
export function claimLeaseMs(timeoutMs: number): number {
  return Math.max(3 * timeoutMs, leaseFloorMs(timeoutMs));
}

const EXCERPT_BYTES = 1024;

/** Resolves after `ms`, or with the first of `promises`, and leaves no timer behind. */
async function raceWithTimeout(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      ...promises,
      new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, ms)))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

interface PendingRecord {
  readonly outcome: AttemptOutcome;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Collects attempt outcomes of one environment and writes them in units, one at a time, each
 * taking every outcome that arrived within the window or while the previous unit committed: a
 * unit (and an fsync) per attempt would bound delivery to the writer's pace.
 */
class AttemptRecorder {
  #pending: PendingRecord[] = [];
  #flushing: Promise<void> | null = null;

  constructor(
    private readonly write: (outcomes: AttemptOutcome[]) => Promise<void>,
    private readonly apiBusy: () => boolean,
  ) {}

  /** Resolves when the outcome is durable; rejects when its unit failed. */
  add(outcome: AttemptOutcome): Promise<void> {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    this.#pending.push({ outcome, resolve, reject });
    this.#flushing ??= this.#flush();
    return promise;
  }

  async #flush(): Promise<void> {
    while (this.#pending.length > 0) {
      const windowMs = this.apiBusy() ? BUSY_RECORD_WINDOW_MS : RECORD_WINDOW_MS;
      await new Promise((resolve) => setTimeout(resolve, windowMs));
      const unit = this.#pending.splice(0);
      try {
        await this.write(unit.map((p) => p.outcome));
        for (const p of unit) p.resolve();
      } catch (error) {
        // Those deliveries stay claimed until their lease ends, then are attempted again.
        for (const p of unit) p.reject(error);
      }
    }
    this.#flushing = null;
  }
}

/** A claimed delivery waiting for a slot of its endpoint. */
interface Queued {
  readonly environment: Environment;
  readonly delivery: ClaimedDelivery;
  /** The endpoint's slots when claimed: one while its circuit is open. */
  readonly slots: number;
  /** Claimed while the endpoint's circuit was open: the one attempt it gets. */
  readonly probe: boolean;
  /** When its claim ends; extended while it waits (see #leasesRunningOut). */
  leaseUntil: number;
}

/** One attempt as its sweep follows it. */
interface Attempt {
  readonly startedAt: number;
  /** Resolves when the attempt has ended (answered, failed or timed out). */
  readonly ended: Promise<unknown>;
  /** Resolves when its outcome is durable; rejects when it could not be recorded. */
  readonly recorded: Promise<void>;
  hasEnded: boolean;
}

/** The attempts of one sweep: all of them, and those still running apart. */
class SweepAttempts {
  readonly all: Attempt[] = [];
  readonly #running = new Set<Attempt>();

  add(attempt: Attempt): void {
    this.all.push(attempt);
    this.#running.add(attempt);
    void attempt.ended.then(() => this.#running.delete(attempt));
  }

  /** The attempts still running that started less than `ms` ago. */
  runningFor(ms: number): Attempt[] {
    const since = performance.now() - ms;
    return [...this.#running].filter((a) => !a.hasEnded && a.startedAt > since);
  }
}

async function readExcerpt(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < EXCERPT_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
  }
  await reader.cancel();
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return new TextDecoder().decode(bytes.subarray(0, EXCERPT_BYTES));
}

const logToStderr = (entry: Record<string, unknown>) => console.error(JSON.stringify(entry));

/** The dispatcher's name in worker logs and metrics. */
export const WEBHOOK_WORKER = "webhooks";

export class WebhookDispatcher {
  #loop: WorkerLoop | null = null;
  #sweeping: Promise<number> | null = null;
  readonly #recorders: Record<Environment, AttemptRecorder>;
  /** Attempts running per endpoint (`environment:endpoint`): the endpoint's slots in use. */
  readonly #slotsInUse = new Map<string, number>();
  /** Deliveries this process claimed and has not recorded yet (`environment:delivery`). */
  readonly #held = new Set<string>();
  /** Open circuits: no attempt to the endpoint before this time (lost on restart: one probe). */
  readonly #probeNotBefore = new Map<string, number>();
  /** Claimed deliveries waiting for a slot of their endpoint, by endpoint. */
  readonly #queued = new Map<string, Queued[]>();
  /** Every attempt until its outcome is recorded, for settled(). */
  readonly #unrecorded = new Set<Promise<void>>();

  constructor(
    private readonly databases: Readonly<Record<Environment, Database>>,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
    private readonly options: DispatcherOptions,
  ) {
    const leaseMin = leaseFloorMs(options.timeoutMs);
    if (options.leaseMs < leaseMin) {
      throw new Error(
        `leaseMs must outlast an attempt: at least ${leaseMin} ms, not ${options.leaseMs} ms`,
      );
    }
    const busy = () => options.apiBusy?.() ?? false;
    const recorder = (environment: Environment) =>
      new AttemptRecorder((outcomes) => this.#record(environment, outcomes), busy);
    this.#recorders = { test: recorder("test"), live: recorder("live") };
  }

  /**
   * Attempts everything due now in both environments, as slots allow; returns the attempts
   * started. It resolves once each of them is recorded, except those still running after
   * `attemptWaitMs`, which end and are recorded in the background (settled() waits for them).
   */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweepAll().finally(() => {
      this.#sweeping = null;
    });
    return this.#sweeping;
  }

  /** Resolves when every attempt started so far has ended and its record was written or failed. */
  async settled(): Promise<void> {
    while (this.#unrecorded.size > 0) await Promise.allSettled([...this.#unrecorded]);
  }

  async #sweepAll(): Promise<number> {
    const waitMs = this.options.attemptWaitMs ?? ATTEMPT_WAIT_IN_SWEEP_MS;
    const busy = () => this.options.apiBusy?.() ?? false;
    const mine = new SweepAttempts();
    const awaited = () => mine.runningFor(waitMs);
    // An endpoint's secret is unsealed once per sweep, not once per delivery.
    const secrets = new Map<string, Promise<string>>();
    const opened = (sealed: string) => {
      let secret = secrets.get(sealed);
      if (!secret) secrets.set(sealed, secret = this.secretBox.openText(sealed));
      return secret;
    };
    // A claim runs beside the attempts: starting the queued ones never waits on a claim's unit.
    let claim = null as Promise<void> | null;
    let claimFailure = null as { error: unknown } | null;
    let lastClaimAt = -Infinity;
    let lastClaimTook = 0;
    let claimEnded = false;
    for (let round = 0;; round++) {
      if (claimFailure) throw claimFailure.error;
      claimEnded = false;
      const started = await this.#startQueued(mine, opened, awaited);
      // Under API traffic a small claim: claiming blocks the thread, and a short block per few
      // deliveries keeps API latency even.
      const room = (busy() ? BUSY_BATCH_SIZE : this.options.batchSize) - this.#queuedCount();
      // A claim costs a scan of the due deliveries (and a unit and an fsync when it takes some):
      // claim when a tick has passed, or when the last claim found work and an endpoint in flight
      // is running out of queue.
      if (
        claim === null && room > 0 &&
        (performance.now() - lastClaimAt >= CLAIM_TICK_MS ||
          (lastClaimTook > 0 && this.#queueRunningLow()))
      ) {
        lastClaimAt = performance.now();
        claim = this.#claimRound(room, round)
          .then((took) => void (lastClaimTook = took), (error) => void (claimFailure ??= { error }))
          .finally(() => {
            claim = null;
            claimEnded = true;
          });
      }
      if (started > 0) continue;
      const waiting = awaited();
      if (claim === null && waiting.length === 0) {
        // A claim that ended while its deliveries were not yet started gets one more pass.
        if (claimEnded) continue;
        break;
      }
      const oldest = Math.min(...waiting.map((a) => a.startedAt));
      await raceWithTimeout(
        [...waiting.map((a) => a.ended), ...(claim ? [claim] : [])],
        Math.min(CLAIM_TICK_MS, oldest + waitMs - performance.now()),
      );
    }
    await Promise.all(mine.all.filter((a) => a.hasEnded).map((a) => a.recorded));
    return mine.all.length;
  }

  #queuedCount(): number {
    let count = 0;
    for (const queue of this.#queued.values()) count += queue.length;
    return count;
  }

  /** True when an endpoint with attempts in flight has less than one round of slots queued. */
  #queueRunningLow(): boolean {
    for (const endpoint of this.#slotsInUse.keys()) {
      const queue = this.#queued.get(endpoint);
      if (!queue || queue.length < queue[0].slots) return true;
    }
    return false;
  }

  /**
   * Starts queued deliveries while their endpoints have free slots, one endpoint after another
   * (so no endpoint's queue goes first), at most `endpointsInParallel × perEndpointConcurrency`
   * working at once; returns how many started.
   */
  async #startQueued(
    mine: SweepAttempts,
    opened: (sealed: string) => Promise<string>,
    awaited: () => Attempt[],
  ): Promise<number> {
    const workers = this.options.endpointsInParallel * this.options.perEndpointConcurrency;
    let started = 0;
    for (let progressed = true; progressed;) {
      progressed = false;
      for (const [endpoint, queue] of this.#queued) {
        const busy = this.options.apiBusy?.() ?? false;
        if (!busy && awaited().length >= workers) return started;
        if ((this.#slotsInUse.get(endpoint) ?? 0) >= queue[0].slots) continue;
        const next = queue.shift()!;
        if (queue.length === 0) this.#queued.delete(endpoint);
        if (busy) await this.#yieldToRequests(mine);
        mine.add(this.#start(next.environment, next.delivery, opened, next.probe));
        started++;
        progressed = true;
      }
    }
    return started;
  }

  /**
   * API requests come first on a small machine: under traffic attempts start one at a time, each
   * after the previous one ended (or has waited on the network for busyAttemptWaitMs), paced,
   * so deliveries never stop under steady traffic.
   */
  async #yieldToRequests(mine: SweepAttempts): Promise<void> {
    const waitMs = busyAttemptWaitMs(this.options.timeoutMs);
    for (;;) {
      const working = mine.runningFor(waitMs);
      if (working.length === 0) break;
      const youngest = Math.max(...working.map((a) => a.startedAt));
      await raceWithTimeout(
        working.map((a) => a.ended),
        youngest + waitMs - performance.now(),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, BUSY_PACE_MS));
  }

  /**
   * One claim in each environment at once (neither waits on the other), of at most `room`
   * deliveries in all; returns how many were claimed.
   */
  async #claimRound(room: number, round: number): Promise<number> {
    // Which environment's deliveries queue first alternates, for the order they start in.
    const environments: Environment[] = round % 2 === 0 ? ["test", "live"] : ["live", "test"];
    const share = Math.ceil(room / environments.length);
    const claims = await Promise.all(
      environments.map((environment) => this.#claim(environment, share)),
    );
    return claims.reduce((sum, claimed) => sum + claimed, 0);
  }

  /**
   * Claims up to `size` due deliveries of one environment into their endpoints' queues: no more
   * per endpoint than CLAIM_AHEAD_ROUNDS rounds of its slots (one delivery in all for an open
   * circuit, none before its probe time). Each lease is `leaseMs`, extended while the delivery
   * waits, so that a crash releases every claim within `leaseMs`.
   */
  async #claim(environment: Environment, size: number): Promise<number> {
    const key = (id: string) => `${environment}:${id}`;
    const { perEndpointConcurrency, leaseMs } = this.options;
    const allowance = perEndpointConcurrency * CLAIM_AHEAD_ROUNDS;
    const ahead = (endpointId: string) =>
      (this.#slotsInUse.get(key(endpointId)) ?? 0) +
      (this.#queued.get(key(endpointId))?.length ?? 0);
    // An idle sweep looks before it claims: a claim is a write unit, and on a shared libSQL
    // primary every node's empty claims would hold its one write lock twice a second.
    const queuedHere = [...this.#queued.values()].some((queue) =>
      queue.some((q) => q.environment === environment)
    );
    if (!queuedHere && !(await anyDeliveryDue(this.databases[environment], this.clock.now()))) {
      return 0;
    }
    const claimed = await this.databases[environment].writer.write(async (tx) => {
      const now = this.clock.now();
      const full: string[] = [];
      for (const endpoint of new Set([...this.#slotsInUse.keys(), ...this.#queued.keys()])) {
        const [env, id] = endpoint.split(":");
        if (env === environment && ahead(id) >= allowance) full.push(id);
      }
      // Left out while their circuit is open: a success or an explicit enable closes it.
      const waitingForProbe: string[] = [];
      for (const [endpoint, notBefore] of this.#probeNotBefore) {
        const [env, id] = endpoint.split(":");
        if (env === environment && notBefore > now) waitingForProbe.push(id);
      }
      const due = await dueDeliveries(tx, now, { full, waitingForProbe, limit: size });
      const taken: { delivery: DueDelivery; slots: number; probe: boolean }[] = [];
      const reserved = new Map<string, number>();
      for (const delivery of due) {
        if (this.#held.has(key(delivery.id))) continue;
        const open = circuitAt(delivery.failingSince, now) === "open";
        const slots = open ? 1 : perEndpointConcurrency;
        const position = ahead(delivery.endpointId) + (reserved.get(delivery.endpointId) ?? 0);
        if (position >= (open ? 1 : allowance)) continue;
        reserved.set(delivery.endpointId, (reserved.get(delivery.endpointId) ?? 0) + 1);
        taken.push({ delivery, slots, probe: open });
      }
      const leaseUntil = now + leaseMs;
      const rows = await claimDeliveries(tx, taken.map((t) => t.delivery.id), now, leaseUntil);
      const extended = await this.#extendLeases(tx, environment, now);
      return {
        extended,
        claimed: rows.map((delivery, i) => ({ ...taken[i], delivery, leaseUntil })),
      };
    });
    this.#leasesExtended(claimed.extended);
    // Held once the claim has committed; only one claim of an environment runs at a time.
    for (const { delivery, slots, probe, leaseUntil } of claimed.claimed) {
      this.#held.add(key(delivery.id));
      const endpoint = key(delivery.endpointId);
      const queue = this.#queued.get(endpoint) ?? [];
      queue.push({ environment, delivery, slots, probe, leaseUntil });
      this.#queued.set(endpoint, queue);
    }
    return claimed.claimed.length;
  }

  /**
   * In a unit of `environment`: extends the claims of its queued deliveries whose lease would no
   * longer outlast an attempt started by the next unit (every attempt's end brings a record unit,
   * every tick of a sweep a claim unit); returns them and their new lease.
   */
  async #extendLeases(
    tx: WriteTx,
    environment: Environment,
    now: number,
  ): Promise<{ queued: Queued[]; leaseUntil: number }> {
    const { leaseMs, timeoutMs } = this.options;
    const runningOut = now + leaseFloorMs(timeoutMs);
    const queued = [...this.#queued.values()].flat().filter((q) =>
      q.environment === environment && q.leaseUntil < runningOut
    );
    const leaseUntil = now + leaseMs;
    await extendClaims(tx, queued.map((q) => q.delivery.id), leaseUntil);
    return { queued, leaseUntil };
  }

  #leasesExtended(extended: { queued: Queued[]; leaseUntil: number }): void {
    for (const q of extended.queued) q.leaseUntil = extended.leaseUntil;
  }

  /** Releases the claims of queued deliveries that will not be attempted: the process stops. */
  async #releaseQueued(): Promise<void> {
    for (const environment of ["test", "live"] as const) {
      const queued = [...this.#queued.values()].flat().filter((q) => q.environment === environment);
      if (queued.length === 0) continue;
      await this.databases[environment].writer.write((tx) =>
        releaseClaims(tx, queued.map((q) => q.delivery.id))
      );
      for (const q of queued) this.#held.delete(`${environment}:${q.delivery.id}`);
    }
    this.#queued.clear();
  }

  /**
   * Starts one attempt; its slot is freed when it ends (a probe's once recorded), its outcome
   * recorded after.
   */
  #start(
    environment: Environment,
    delivery: ClaimedDelivery,
    opened: (sealed: string) => Promise<string>,
    probe: boolean,
  ): Attempt {
    const endpoint = `${environment}:${delivery.endpointId}`;
    this.#slotsInUse.set(endpoint, (this.#slotsInUse.get(endpoint) ?? 0) + 1);
    const attempt = { startedAt: performance.now(), hasEnded: false };
    const release = () => {
      const inUse = (this.#slotsInUse.get(endpoint) ?? 1) - 1;
      if (inUse > 0) this.#slotsInUse.set(endpoint, inUse);
      else this.#slotsInUse.delete(endpoint);
    };
    const ended = this.#attempt(environment, delivery, opened).finally(() => {
      attempt.hasEnded = true;
      if (!probe) release();
    });
    const recorded = ended
      .then((result) => this.#recorders[environment].add({ delivery, result }))
      .finally(() => {
        this.#held.delete(`${environment}:${delivery.id}`);
        // A probe holds its endpoint's one slot until its outcome has moved the circuit.
        if (probe) release();
      });
    // Its sweep reads the failure; an attempt left to the background must not be unhandled.
    const tracked = recorded.catch(() => {});
    this.#unrecorded.add(tracked);
    void tracked.finally(() => this.#unrecorded.delete(tracked));
    return Object.assign(attempt, { ended: ended.catch(() => {}), recorded });
  }

  async #attempt(
    environment: Environment,
    delivery: ClaimedDelivery,
    opened: (sealed: string) => Promise<string>,
  ): Promise<AttemptResult> {
    // The whole attempt, resolving the name included, ends within the timeout (and the lease).
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const secrets = await Promise.all(delivery.sealedSecrets.map((s) => opened(s)));
    // The body's signature and the header's share one timestamp.
    const timestampSeconds = Math.floor(this.clock.now() / 1000);
    let body: string;
    let bodySignature: string | null = null;
    if (delivery.surface === "v1") {
      const envelope = surfaceBEnvelope(delivery.event);
      bodySignature = await signEnvelope({ envelope, secrets, timestampSeconds });
      body = JSON.stringify({
        ...envelope,
        signature: bodySignature,
        sequence: delivery.event.sequence ?? null,
      });
    } else {
      body = JSON.stringify(surfaceAEnvelope(delivery.event, {
        documentLink: delivery.signedDocumentId && this.options.documentLink
          ? await this.options.documentLink(environment, delivery.signedDocumentId)
          : null,
      }));
    }
    const signed = await signDelivery({
      eventId: delivery.event.id,
      body,
      secrets,
      timestampSeconds,
      ed25519Key: delivery.ed25519
        ? (await webhookSigningKeys(this.secretBox, environment)).signingKey
        : null,
    });
    const started = performance.now();
    // A /v1 attempt keeps its body's signature (the events API shows it beside the same envelope).
    const finish = (partial: Omit<AttemptResult, "durationMs" | "signature">): AttemptResult => ({
      ...partial,
      durationMs: Math.round(performance.now() - started),
      signature: bodySignature ?? signed["X-Signature"],
    });
    const notSent = (message: string) =>
      finish({
        statusCode: null,
        excerpt: null,
        error: `not sent: ${message}`,
        retryAfterSeconds: null,
      });
    // The URL is checked again at every attempt: the rules may have tightened since registration.
    const allowed = checkEndpointUrl(delivery.url, environment);
    if (!allowed.ok) return notSent(allowed.message);
    const resolved = await resolveEndpointHost(allowed.value.hostname, environment, {
      resolve: this.options.resolve,
      signal,
    });
    if (!resolved.ok) return notSent(resolved.message);
    // Connect to exactly the addresses just checked: a second lookup could answer differently.
    const send = this.options.fetch ??
      (resolved.addresses ? pinnedFetch(resolved.addresses) as typeof fetch : fetch);
    try {
      await untilDurable();
    } catch (error) {
      return notSent(`commits cannot be made durable: ${(error as Error).message}`);
    }
    try {
      const response = await send(delivery.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "disbursement-webhooks/1",
          "X-Event-Id": delivery.event.id,
          "X-Delivery-Attempt": String(delivery.attemptCount + 1),
          ...signed,
        },
        body,
        redirect: "manual",
        signal,
      });
      const retryAfter = Number(response.headers.get("Retry-After"));
      return finish({
        statusCode: response.status,
        excerpt: await readExcerpt(response),
        error: null,
        retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
      });
    } catch (error) {
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return finish({
        statusCode: null,
        excerpt: null,
        error: message.slice(0, EXCERPT_BYTES),
        retryAfterSeconds: null,
      });
    }
  }

  /** Writes one unit of outcomes, then follows the endpoints' circuits and logs any disabled. */
  async #record(environment: Environment, outcomes: AttemptOutcome[]): Promise<void> {
    const now = this.clock.now();
    const { recorded, extended } = await this.databases[environment].writer.write(async (tx) => ({
      recorded: await recordAttempts(tx, outcomes, now, this.options.random),
      extended: await this.#extendLeases(tx, environment, now),
    }));
    this.#leasesExtended(extended);
    for (const [id, circuit] of recorded.circuits) {
      const endpoint = `${environment}:${id}`;
      if (circuit.probeNotBefore === null) this.#probeNotBefore.delete(endpoint);
      else this.#probeNotBefore.set(endpoint, circuit.probeNotBefore);
    }
    for (const disabled of recorded.disabled) {
      this.#probeNotBefore.delete(`${environment}:${disabled.endpointId}`);
      (this.options.log ?? logToStderr)({
        level: "warn",
        msg: "webhook endpoint disabled",
        environment,
        endpoint_id: disabled.endpointId,
        company_id: disabled.companyId,
        reason: disabled.reason,
        failing_since: disabled.failingSince === null
          ? null
          : new Date(disabled.failingSince).toISOString(),
      });
    }
  }

  /** Sweeps on the worker loop every `intervalMs`, and each minute from Deno.cron when available. */
  start(intervalMs: number, metrics?: Metrics): void {
    this.#loop = new WorkerLoop({
      name: WEBHOOK_WORKER,
      sweep: () => this.sweep(),
      intervalMs,
      metrics,
    });
    this.#loop.start();
  }

  /** Stops sweeping and waits for the attempts in flight to finish and be recorded. */
  async stop(): Promise<void> {
    await this.#loop?.stop();
    this.#loop = null;
    if (this.#sweeping) await this.#sweeping.catch(() => {});
    await this.settled();
    await this.#releaseQueued();
  }
}
