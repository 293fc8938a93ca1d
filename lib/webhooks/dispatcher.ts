/**
 * The webhook dispatcher: claims due deliveries from the database with a lease, sends each as a
 * signed POST (10 s timeout, redirects not followed), and records every attempt. Network waits
 * happen outside write units, so a slow endpoint never holds the writer; attempts to one endpoint
 * are capped, so a slow endpoint cannot starve the others.
 */
import { pinnedFetch } from "./pinned_fetch.ts";
import type { Clock } from "../platform/clock.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { Environment } from "../platform/config.ts";
import { type DeliverableEvent, surfaceAEnvelope, surfaceBEnvelope } from "./payloads.ts";
import { nextAttemptAt } from "./schedule.ts";
import { signDelivery } from "./signing.ts";
import { blockedIpv4, blockedIpv6, checkEndpointUrl } from "./endpoint_url.ts";
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { WorkerLoop } from "../../db/worker_loop.ts";
import type { Metrics } from "../platform/metrics.ts";

export interface DispatcherOptions {
  readonly batchSize: number;
  readonly endpointsInParallel: number;
  /** Attempts in flight to one endpoint at most, so a slow one cannot take every worker. */
  readonly perEndpointConcurrency: number;
  readonly timeoutMs: number;
  /** How long a claim keeps other sweeps away from a delivery (a crash releases it after). */
  readonly leaseMs: number;
  readonly fetch?: typeof fetch;
  /** Resolves a host name to its addresses (A and AAAA); Deno.resolveDns by default. */
  readonly resolve?: (host: string) => Promise<string[]>;
  readonly random?: () => number;
  /** True while API requests are in flight: then only one worker keeps delivering. */
  readonly apiBusy?: () => boolean;
  /** An expiring signed link to a signed document, for Surface A's DocumentLink. */
  readonly documentLink?: (environment: Environment, signedDocumentId: string) => Promise<string>;
}

interface ClaimedDelivery {
  readonly id: string;
  readonly endpointId: string;
  readonly url: string;
  readonly surface: "api" | "v1";
  readonly sealedSecrets: string[];
  readonly manual: boolean;
  readonly attemptCount: number;
  readonly createdAt: number;
  readonly event: DeliverableEvent;
  /** The payee's latest signed document, linked from Surface A payloads. */
  readonly signedDocumentId: string | null;
}

interface AttemptResult {
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly excerpt: string | null;
  readonly error: string | null;
  readonly retryAfterSeconds: number | null;
  readonly signature: string;
}

interface AttemptOutcome {
  readonly delivery: ClaimedDelivery;
  readonly result: AttemptResult;
}

/**
 * How long outcomes gather before their unit: a commit blocks the thread for an fsync, so under
 * API traffic they gather longer.
 */
const RECORD_WINDOW_MS = 10;
const BUSY_RECORD_WINDOW_MS = 50;

/**
 * Collects attempt outcomes and writes them in units, one at a time, each taking every outcome
 * that arrived within the window or while the previous unit committed.
 */
class AttemptRecorder {
  #pending: AttemptOutcome[] = [];
  #flushing: Promise<void> | null = null;
  #draining = false;
  #error: unknown = null;

  constructor(
    private readonly write: (outcomes: AttemptOutcome[]) => Promise<void>,
    private readonly apiBusy: () => boolean,
  ) {}

  add(outcome: AttemptOutcome): void {
    this.#pending.push(outcome);
    this.#flushing ??= this.#flush();
  }

  /** Resolves when every added outcome is durable; rejects if any unit failed. */
  async settled(): Promise<void> {
    this.#draining = true;
    while (this.#flushing) await this.#flushing;
    if (this.#error !== null) throw this.#error;
  }

  async #flush(): Promise<void> {
    while (this.#pending.length > 0) {
      if (!this.#draining) {
        const windowMs = this.apiBusy() ? BUSY_RECORD_WINDOW_MS : RECORD_WINDOW_MS;
        await new Promise((resolve) => setTimeout(resolve, windowMs));
      }
      try {
        await this.write(this.#pending.splice(0));
      } catch (error) {
        // Those deliveries stay claimed until their lease ends, then are attempted again.
        this.#error ??= error;
      }
    }
    this.#flushing = null;
  }
}

const EXCERPT_BYTES = 1024;

async function resolveBoth(host: string): Promise<string[]> {
  const lookups = await Promise.allSettled([
    Deno.resolveDns(host, "A"),
    Deno.resolveDns(host, "AAAA"),
  ]);
  const found = lookups.flatMap((l) => (l.status === "fulfilled" ? l.value : []));
  if (found.length === 0 && lookups[0].status === "rejected") throw lookups[0].reason;
  return found;
}

/** Deliveries claimed at a time while API requests are in flight. */
const BUSY_BATCH_SIZE = 8;

/** Under API traffic the one worker that goes on waits this long between attempts. */
const BUSY_PACE_MS = 5;
const paceUnderTraffic = () => new Promise((resolve) => setTimeout(resolve, BUSY_PACE_MS));

async function claim(
  tx: WriteTx,
  now: number,
  size: number,
  options: DispatcherOptions,
): Promise<ClaimedDelivery[]> {
  const { rows } = await tx.execute({
    sql: `SELECT d.id, d.endpoint_id, d.manual, d.attempt_count, d.created_at AS delivery_created,
            e.url, e.surface, e.secret_ciphertext, e.previous_secret_ciphertext, e.previous_secret_expires_at,
            ev.id AS event_id, ev.line_id, ev.type, ev.event_type_id, ev.reason, ev.data, ev.created_at AS event_created,
            c.name AS company_name, c.tin,
            (SELECT json_group_object(code, id) FROM ledger_accounts WHERE line_id = ev.line_id) AS ledger_accounts,
            (SELECT id FROM signed_documents WHERE payout_id = ev.payout_id
               ORDER BY signed_at DESC, id DESC LIMIT 1) AS signed_document_id
          FROM webhook_deliveries d
          JOIN webhook_endpoints e ON e.id = d.endpoint_id
          JOIN events ev ON ev.id = d.event_id
          JOIN companies c ON c.id = ev.company_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.claimed_until IS NULL OR d.claimed_until < ?)
            AND e.disabled_at IS NULL AND e.deleted_at IS NULL
          ORDER BY d.next_attempt_at, d.rowid LIMIT ?`,
    args: [now, now, size],
  });
  if (rows.length === 0) return [];
  await tx.execute({
    sql: `UPDATE webhook_deliveries SET claimed_until = ? WHERE id IN (${
      rows.map(() => "?").join(", ")
    })`,
    args: [now + options.leaseMs, ...rows.map((r) => String(r.id))],
  });
  return rows.map((row) => ({
    id: String(row.id),
    endpointId: String(row.endpoint_id),
    url: String(row.url),
    surface: row.surface as "api" | "v1",
    // During a rotation the previous secret signs beside the new one until it expires.
    sealedSecrets: [
      String(row.secret_ciphertext),
      ...(row.previous_secret_ciphertext !== null && Number(row.previous_secret_expires_at) > now
        ? [String(row.previous_secret_ciphertext)]
        : []),
    ],
    manual: Number(row.manual) === 1,
    attemptCount: Number(row.attempt_count),
    createdAt: Number(row.delivery_created),
    event: {
      id: String(row.event_id),
      type: row.type === null ? null : String(row.type),
      eventTypeId: Number(row.event_type_id),
      reason: row.reason === null ? null : String(row.reason),
      createdAt: Number(row.event_created),
      data: JSON.parse(String(row.data)) as Record<string, unknown>,
      company: { name: String(row.company_name), tin: String(row.tin) },
      lineId: row.line_id === null ? null : String(row.line_id),
      ledgerAccounts: row.ledger_accounts === null
        ? {}
        : JSON.parse(String(row.ledger_accounts)) as Record<string, string>,
    },
    signedDocumentId: row.signed_document_id === null ? null : String(row.signed_document_id),
  }));
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

/** The dispatcher's name in worker logs and metrics. */
export const WEBHOOK_WORKER = "webhooks";

export class WebhookDispatcher {
  #loop: WorkerLoop | null = null;
  #sweeping: Promise<number> | null = null;

  constructor(
    private readonly databases: Readonly<Record<Environment, Database>>,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
    private readonly options: DispatcherOptions,
  ) {}

  /** Delivers everything due now in both environments; returns the attempts made. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweepAll().finally(() => {
      this.#sweeping = null;
    });
    return this.#sweeping;
  }

  async #sweepAll(): Promise<number> {
    let attempts = 0;
    for (
      const [environment, database] of Object.entries(this.databases) as [Environment, Database][]
    ) {
      for (;;) {
        const now = this.clock.now();
        // Under API traffic a small batch: claiming (one query and one update of every row) blocks
        // the thread, and a short block per few deliveries keeps API latency even.
        const size = this.options.apiBusy?.() ? BUSY_BATCH_SIZE : this.options.batchSize;
        const claimed = await database.writer.write((tx) => claim(tx, now, size, this.options));
        if (claimed.length === 0) break;
        attempts += await this.#deliverAll(environment, database, claimed);
      }
    }
    return attempts;
  }

  async #deliverAll(
    environment: Environment,
    database: Database,
    claimed: ClaimedDelivery[],
  ): Promise<number> {
    // Each endpoint's deliveries are dealt into at most `perEndpointConcurrency` queues.
    const queuesByEndpoint = new Map<string, ClaimedDelivery[][]>();
    for (const delivery of claimed) {
      const queues = queuesByEndpoint.get(delivery.endpointId) ?? [];
      if (queues.length < this.options.perEndpointConcurrency) queues.push([delivery]);
      else {queues.reduce((shortest, q) => (q.length < shortest.length ? q : shortest)).push(
          delivery,
        );}
      queuesByEndpoint.set(delivery.endpointId, queues);
    }
    const queues = [...queuesByEndpoint.values()].flat();
    const workers = Math.min(
      this.options.endpointsInParallel * this.options.perEndpointConcurrency,
      queues.length,
    );
    let attempts = 0;
    // Outcomes are recorded while the next attempts run, and every outcome that came in during a
    // commit goes into the next one: a unit (and an fsync) per attempt would bound delivery to
    // the writer's pace. The claim's lease keeps a delivery away from other sweeps until its
    // record commits; all commit before returning.
    const recorder = new AttemptRecorder(
      (outcomes) => database.writer.write((tx) => this.#record(tx, outcomes)),
      () => this.options.apiBusy?.() ?? false,
    );
    // An endpoint's secret is unsealed once per batch, not once per delivery.
    const secrets = new Map<string, Promise<string>>();
    const opened = (sealed: string) => {
      let secret = secrets.get(sealed);
      if (!secret) secrets.set(sealed, secret = this.secretBox.openText(sealed));
      return secret;
    };
    let firstWorking = true;
    const worker = async (_: unknown, index: number) => {
      try {
        for (let queue = queues.shift(); queue; queue = queues.shift()) {
          while (queue.length > 0) {
            // API requests come first on a small machine: under traffic the other workers hand
            // their deliveries to the first (while it still works) and stop, and it goes on
            // alone, paced, so deliveries never stop under steady traffic.
            if (this.options.apiBusy?.()) {
              if (index > 0 && firstWorking) {
                queues.unshift(queue);
                return;
              }
              await paceUnderTraffic();
            }
            const delivery = queue.shift()!;
            const result = await this.#attempt(environment, delivery, opened);
            recorder.add({ delivery, result });
            attempts++;
          }
        }
      } finally {
        if (index === 0) firstWorking = false;
      }
    };
    await Promise.all(Array.from({ length: workers }, worker));
    await recorder.settled();
    return attempts;
  }

  async #attempt(
    environment: Environment,
    delivery: ClaimedDelivery,
    opened: (sealed: string) => Promise<string>,
  ): Promise<AttemptResult> {
    const envelope = delivery.surface === "v1"
      ? surfaceBEnvelope(delivery.event)
      : surfaceAEnvelope(delivery.event, {
        documentLink: delivery.signedDocumentId && this.options.documentLink
          ? await this.options.documentLink(environment, delivery.signedDocumentId)
          : null,
      });
    const body = JSON.stringify(envelope);
    const secrets = await Promise.all(delivery.sealedSecrets.map((s) => opened(s)));
    const signed = await signDelivery({
      eventId: delivery.event.id,
      body,
      secrets,
      timestampSeconds: Math.floor(this.clock.now() / 1000),
    });
    const started = performance.now();
    const finish = (partial: Omit<AttemptResult, "durationMs" | "signature">): AttemptResult => ({
      ...partial,
      durationMs: Math.round(performance.now() - started),
      signature: signed["X-Signature"],
    });
    // The URL is checked again at every attempt: the rules may have tightened since registration.
    const allowed = checkEndpointUrl(delivery.url, environment);
    if (!allowed.ok) {
      return finish({
        statusCode: null,
        excerpt: null,
        error: `not sent: ${allowed.message}`,
        retryAfterSeconds: null,
      });
    }
    let send: (url: string, init: RequestInit & { body: string }) => Promise<Response> = fetch;
    if (environment === "live") {
      const resolved = await this.#allowedAddresses(allowed.value.hostname);
      if (!resolved.ok) {
        return finish({
          statusCode: null,
          excerpt: null,
          error: `not sent: ${resolved.message}`,
          retryAfterSeconds: null,
        });
      }
      // Connect to exactly the addresses just checked: a second lookup could answer differently.
      if (resolved.addresses) send = pinnedFetch(resolved.addresses) as typeof send;
    }
    try {
      const response = await (this.options.fetch ?? send)(delivery.url, {
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
        signal: AbortSignal.timeout(this.options.timeoutMs),
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

  /**
   * The addresses a live host name may be reached at, every one judged; null for a literal
   * address, which checkEndpointUrl judged already.
   */
  async #allowedAddresses(
    hostname: string,
  ): Promise<{ ok: true; addresses: string[] | null } | { ok: false; message: string }> {
    if (hostname.startsWith("[") || /^[\d.]+$/.test(hostname)) return { ok: true, addresses: null };
    let addresses: string[];
    try {
      addresses = await (this.options.resolve ?? resolveBoth)(hostname);
    } catch (error) {
      const message = `${hostname} did not resolve: ${
        error instanceof Error ? error.message : error
      }`;
      return { ok: false, message };
    }
    if (addresses.length === 0) return { ok: false, message: `${hostname} has no address` };
    for (const address of addresses) {
      const problem = address.includes(":") ? blockedIpv6(address) : blockedIpv4(address);
      if (problem) return { ok: false, message: `${hostname} resolves to ${address}: ${problem}` };
    }
    return { ok: true, addresses };
  }

  /** Records a batch of attempts with one statement per table. */
  async #record(tx: WriteTx, outcomes: readonly AttemptOutcome[]): Promise<void> {
    const now = this.clock.now();
    const rows = (width: number) => outcomes.map(() => `(${Array(width).fill("?").join(", ")})`);
    await tx.execute({
      sql:
        `INSERT INTO delivery_attempts (delivery_id, attempted_at, status_code, duration_ms, response_excerpt, error)
            VALUES ${rows(6).join(", ")}`,
      args: outcomes.flatMap(({ delivery, result }) => [
        delivery.id,
        now,
        result.statusCode,
        result.durationMs,
        result.excerpt,
        result.error,
      ]),
    });
    const updates = outcomes.map(({ delivery, result }) => {
      const attempts = delivery.attemptCount + 1;
      const succeeded = result.statusCode !== null && result.statusCode >= 200 &&
        result.statusCode < 300;
      const next = succeeded || result.statusCode === 410 || delivery.manual
        ? null
        : nextAttemptAt({
          attemptsMade: attempts,
          eventCreatedAt: delivery.createdAt,
          now,
          retryAfterSeconds: result.retryAfterSeconds,
          random: this.options.random,
        });
      return [
        delivery.id,
        succeeded ? "succeeded" : next === null ? "failed" : "pending",
        attempts,
        next,
        result.signature,
        next === null ? now : null,
      ];
    });
    await tx.execute({
      sql: `UPDATE webhook_deliveries SET status = v.column2, attempt_count = v.column3,
              next_attempt_at = v.column4, claimed_until = NULL, last_signature = v.column5,
              completed_at = v.column6
            FROM (VALUES ${rows(6).join(", ")}) AS v WHERE webhook_deliveries.id = v.column1`,
      args: updates.flat(),
    });
    // Gone: the receiver asked to stop; the endpoint is disabled until re-registered.
    const gone = [
      ...new Set(
        outcomes.filter(({ result }) => result.statusCode === 410).map(({ delivery }) =>
          delivery.endpointId
        ),
      ),
    ];
    if (gone.length > 0) {
      await tx.execute({
        sql: `UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = ?
              WHERE id IN (${gone.map(() => "?").join(", ")})`,
        args: [now, "the receiver answered 410 Gone", ...gone],
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
  }
}
