/**
 * Runs a POST's write unit with DESIGN 7's idempotency. The key's record is looked up, the
 * business change made and the response to replay stored in ONE write unit, so a crash leaves
 * all or nothing, and a duplicate queued behind the first finds its stored response. While the
 * first runs, this process holds its key in memory (at most the lease): a duplicate gets 409, one
 * with another body 422. Validation happens before this is called: a refused request stores
 * nothing.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Database } from "../db/client.ts";
import {
  type IdempotencyScope,
  type KeyLookup,
  lookUpIdempotencyKey,
  storeIdempotentResponse,
} from "../lib/idempotency/store.ts";
import type { GroupCommitWriter, WriteTx } from "../db/writer.ts";
import { idempotencyKeyProblem, requestFingerprint } from "../lib/idempotency/rules.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorBody, errorResponse, type ErrorSpec, surfaceOf } from "./errors.ts";

/** What a write unit answers, as data so it can be stored and replayed byte for byte. */
export interface RouteOutcome {
  readonly status: ContentfulStatusCode;
  readonly body: unknown;
  readonly contentType?: string;
  /** False for a business refusal: the unit's writes are undone, its answer is still stored. */
  readonly commit: boolean;
  /** The body shows a secret once: its stored copy for replays is sealed. */
  readonly sensitive?: boolean;
  readonly headers?: Readonly<Record<string, string>>;
  /** A refusal that may pass later (429): not stored, so the same key can try again. */
  readonly retryable?: boolean;
}

/** A business refusal as an outcome in the request's surface format. */
export function refusalOutcome(c: Context, spec: ErrorSpec): RouteOutcome {
  const { status, contentType, body } = errorBody(surfaceOf(c.req.path), spec);
  return { status, body, contentType, commit: false, headers: spec.headers };
}

export interface IdempotentTarget {
  readonly database: Database;
  readonly companyId: string;
  /** The /v1 key's line; '' for /api. */
  readonly scopeLine: string;
}

/** Runs `unit` inside its own savepoint and undoes it when the outcome says so. */
async function runOutcome(
  tx: WriteTx,
  unit: (tx: WriteTx) => Promise<RouteOutcome>,
): Promise<RouteOutcome> {
  await tx.execute("SAVEPOINT route_outcome");
  try {
    const outcome = await unit(tx);
    if (!outcome.commit) await tx.execute("ROLLBACK TO route_outcome");
    return outcome;
  } catch (error) {
    await tx.execute("ROLLBACK TO route_outcome");
    throw error;
  } finally {
    await tx.execute("RELEASE route_outcome");
  }
}

const encoder = new TextEncoder();
/** Marks a stored response whose body is sealed (it shows a secret). */
const SEALED_HEADER = "x-sealed";

export async function respondIdempotently(
  c: Context<AppEnv>,
  deps: AppDeps,
  target: IdempotentTarget,
  unit: (tx: WriteTx) => Promise<RouteOutcome>,
): Promise<Response> {
  const writer = target.database.writer;
  const key = c.req.header("Idempotency-Key");
  if (key === undefined) {
    const outcome = await writer.write((tx) => runOutcome(tx, unit));
    return send(c, outcome, encoder.encode(JSON.stringify(outcome.body)));
  }
  const problem = idempotencyKeyProblem(key, deps.config.limits.IDEMPOTENCY_KEY_LENGTH_MAX);
  if (problem) {
    return errorResponse(c, {
      status: 400,
      code: "validation_error",
      message: problem,
      issues: [{ field: "Idempotency-Key", location: "header", message: problem }],
    });
  }
  const scope: IdempotencyScope = { companyId: target.companyId, scopeLine: target.scopeLine, key };
  const fingerprint = await requestFingerprint(c.req.method, c.req.path, await c.req.text());
  const now = deps.clock.now();
  const keys = keysInFlight(writer);
  const held = JSON.stringify([scope.companyId, scope.scopeLine, key]);
  const running = keys.get(held);
  if (running && running.until > now) {
    return running.fingerprint === fingerprint ? inProgress(c, key) : keyReused(c, key);
  }
  const mine = { fingerprint, until: now + deps.config.limits.IDEMPOTENCY_LEASE_SECONDS * 1000 };
  keys.set(held, mine);
  let answer: { lookup: KeyLookup; outcome?: RouteOutcome; body?: Uint8Array };
  try {
    answer = await writer.write(async (tx) => {
      const lookup = await lookUpIdempotencyKey(tx, scope, fingerprint, now);
      if (lookup.decision !== "new") return { lookup };
      const outcome = await runOutcome(tx, unit);
      const body = encoder.encode(JSON.stringify(outcome.body));
      if (!outcome.retryable) {
        // Sealing is CPU work of microseconds; the unit still waits on nothing but the database.
        const stored = outcome.sensitive ? encoder.encode(await deps.secretBox.seal(body)) : body;
        await storeIdempotentResponse(tx, scope, fingerprint, {
          status: outcome.status,
          headers: {
            "content-type": outcome.contentType ?? "application/json",
            ...(outcome.sensitive ? { [SEALED_HEADER]: "v1" } : {}),
          },
          body: stored,
        }, { now, ttlMs: deps.config.limits.IDEMPOTENCY_TTL_SECONDS * 1000 });
      }
      return { lookup, outcome, body };
    });
  } finally {
    // A later request may have taken the key after this one's lease ran out: leave it to that one.
    if (keys.get(held) === mine) keys.delete(held);
  }
  const { lookup } = answer;
  if (lookup.decision === "replay") {
    c.header("Idempotent-Replayed", "true");
    const { headers, status } = lookup.response;
    const body = headers[SEALED_HEADER]
      ? await deps.secretBox.open(new TextDecoder().decode(lookup.response.body))
      : lookup.response.body;
    return send(
      c,
      { status: status as ContentfulStatusCode, contentType: headers["content-type"] },
      body,
    );
  }
  if (lookup.decision === "mismatch") return keyReused(c, key);
  if (lookup.decision === "in_progress") return inProgress(c, key);
  return send(c, answer.outcome!, answer.body!);
}

/** Keys of requests this process is running, per writer (that is, per database). */
const inFlightByWriter = new WeakMap<
  GroupCommitWriter,
  Map<string, { fingerprint: string; until: number }>
>();

function keysInFlight(
  writer: GroupCommitWriter,
): Map<string, { fingerprint: string; until: number }> {
  let keys = inFlightByWriter.get(writer);
  if (!keys) inFlightByWriter.set(writer, keys = new Map());
  return keys;
}

function keyReused(c: Context, key: string): Response {
  return errorResponse(c, {
    status: 422,
    code: "idempotency_key_reused",
    message: `Idempotency-Key ${
      JSON.stringify(key)
    } was used with a different request in the last 24 hours`,
    issues: [{
      field: "Idempotency-Key",
      location: "header",
      message: "already used with another request",
    }],
  });
}

function inProgress(c: Context, key: string): Response {
  return errorResponse(c, {
    status: 409,
    code: "idempotency_request_in_progress",
    message: `a request with Idempotency-Key ${
      JSON.stringify(key)
    } is still being processed; retry shortly`,
    headers: { "Retry-After": "1" },
  });
}

function send(
  c: Context,
  outcome: Pick<RouteOutcome, "status" | "contentType" | "headers">,
  body: Uint8Array,
): Response {
  for (const [name, value] of Object.entries(outcome.headers ?? {})) c.header(name, value);
  c.header("Content-Type", outcome.contentType ?? "application/json");
  return c.body(body as Uint8Array<ArrayBuffer>, outcome.status);
}
