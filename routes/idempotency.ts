/**
 * The HTTP side of the idempotency of contract §7: the Idempotency-Key header and the request's
 * fingerprint in, the answer of lib/idempotency/service.ts out. The service runs the use case,
 * looks the key up and stores the answer in one write unit. Validation happens before this is
 * called: a refused request stores nothing.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Database } from "../db/client.ts";
import { idempotencyKeyProblem, requestFingerprint } from "../lib/idempotency/rules.ts";
import {
  type Answer,
  type BatchedUseCase,
  runIdempotently,
  type UseCase,
} from "../lib/idempotency/service.ts";
import { requestText } from "./body_content.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorBody, errorResponse, type ErrorSpec, surfaceOf } from "./errors.ts";

/** What a use case's value is answered with, as data so it can be stored and replayed. */
export interface RouteOutcome {
  readonly status: ContentfulStatusCode;
  readonly body: unknown;
  readonly contentType?: string;
  /** The body shows a secret once: its stored copy for replays is sealed. */
  readonly sensitive?: boolean;
  readonly headers?: Readonly<Record<string, string>>;
  /** A refusal that may pass later (429): not stored, so the same key can try again. */
  readonly retryable?: boolean;
}

/** A business refusal as an outcome in the request's surface format. */
export function refusalOutcome(c: Context, spec: ErrorSpec): RouteOutcome {
  const { status, contentType, body } = errorBody(surfaceOf(c.req.path), spec);
  return { status, body, contentType, headers: spec.headers };
}

export interface IdempotentTarget {
  readonly database: Database;
  readonly companyId: string;
  /** The /v1 key's line; '' for /api. */
  readonly scopeLine: string;
}

const encoder = new TextEncoder();

/**
 * Runs `useCase` once per Idempotency-Key and answers with `respond` of its value. A batched use
 * case runs set-based with the others of its batch queued at the same moment.
 */
export async function respondIdempotently<T, I>(
  c: Context<AppEnv>,
  deps: AppDeps,
  target: IdempotentTarget,
  useCase: UseCase<T> | BatchedUseCase<I, T>,
  respond: (value: T) => RouteOutcome,
): Promise<Response> {
  const key = c.req.header("Idempotency-Key");
  if (key !== undefined) {
    const problem = idempotencyKeyProblem(key, deps.config.limits.IDEMPOTENCY_KEY_LENGTH_MAX);
    if (problem) {
      return errorResponse(c, {
        status: 400,
        code: "validation_error",
        message: problem,
        issues: [{ field: "Idempotency-Key", location: "header", message: problem }],
      });
    }
  }
  const { limits } = deps.config;
  const outcome = await runIdempotently(
    target.database,
    {
      scope: key === undefined
        ? null
        : { companyId: target.companyId, scopeLine: target.scopeLine, key },
      fingerprint: key === undefined
        ? ""
        : await requestFingerprint(c.req.method, c.req.path, await requestText(c)),
      now: deps.clock.now(),
      leaseMs: limits.IDEMPOTENCY_LEASE_SECONDS * 1000,
      ttlMs: limits.IDEMPOTENCY_TTL_SECONDS * 1000,
      secretBox: deps.secretBox,
    },
    useCase as UseCase<T> | BatchedUseCase<unknown, T>,
    (value) => {
      const route = respond(value);
      return {
        status: route.status,
        contentType: route.contentType ?? "application/json",
        body: encoder.encode(JSON.stringify(route.body)),
        sensitive: route.sensitive,
        retryable: route.retryable,
        headers: route.headers,
      };
    },
  );
  switch (outcome.decision) {
    case "new":
      return send(c, outcome.answer);
    case "replay":
      c.header("Idempotent-Replayed", "true");
      return send(c, outcome.answer);
    case "mismatch":
      return keyReused(c, key!);
    case "in_progress":
      return inProgress(c, key!);
  }
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

function send(c: Context, answer: Answer & { headers?: Readonly<Record<string, string>> }) {
  for (const [name, value] of Object.entries(answer.headers ?? {})) c.header(name, value);
  c.header("Content-Type", answer.contentType);
  return c.body(answer.body as Uint8Array<ArrayBuffer>, answer.status as ContentfulStatusCode);
}
