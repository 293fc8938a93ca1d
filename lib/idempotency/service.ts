/**
 * An idempotent request as ONE write unit (contract §7): the key's record is looked up, the use
 * case run and the answer to replay stored together, so a crash leaves all or nothing and a
 * duplicate queued behind the first finds the stored answer. The lookup is sent with the use case's
 * first statements (no round trip of its own on a libSQL server); a key that may not run fails the
 * unit there, so nothing the use case sent is kept. A use case that aborts has its writes undone
 * while the answer to its refusal is still stored. While the first runs, this process holds its
 * key in memory (at most the lease): a duplicate is told so at once instead of waiting.
 *
 * A database several nodes share (a libSQL server) is written by other processes, whose memory
 * this one cannot see: there the request first commits a claim with the lease in the database
 * (one more unit, one round trip), so a duplicate sent to any node gets 409 while the first runs,
 * and the key's fate is still decided by the unit that stores the answer. The embedded file,
 * written by this process alone, keeps the single unit.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { SecretBox } from "../platform/crypto.ts";
import {
  claimIdempotencyKey,
  deferIdempotencyLookup,
  type IdempotencyScope,
  type KeyLookup,
  lookUpIdempotencyKey,
  releaseIdempotencyClaim,
  storeIdempotentResponse,
} from "./store.ts";

export type { IdempotencyScope } from "./store.ts";

/** A use case bound to its input, run inside the request's write unit. */
export type UseCase<T> = (tx: WriteTx) => Promise<T>;

/** What a use case's value is answered with, as bytes so it can be replayed byte for byte. */
export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Uint8Array;
  /** The body shows a secret once: its copy for replays is sealed. */
  readonly sensitive?: boolean;
  /** A refusal that may pass later (429): not kept, so the same key can try again. */
  readonly retryable?: boolean;
}

export interface IdempotentRequest {
  /** Null without a key: the use case runs in a unit of its own and nothing is kept. */
  readonly scope: IdempotencyScope | null;
  readonly fingerprint: string;
  readonly now: number;
  /** How long a running key is held against duplicates (in memory, or claimed in a shared database). */
  readonly leaseMs: number;
  /** How long the answer is replayed. */
  readonly ttlMs: number;
  readonly secretBox: SecretBox;
}

export type IdempotentOutcome<A extends Answer> =
  /** The use case ran; `answer` is what it was answered with. */
  | { readonly decision: "new"; readonly answer: A }
  /** Same key, same request, finished: the stored answer (opened when it was sealed). */
  | { readonly decision: "replay"; readonly answer: Answer }
  /** Same key with another request, or the same request still running. */
  | { readonly decision: "mismatch" | "in_progress" };

/** Marks a stored answer whose body is sealed. */
const SEALED_HEADER = "x-sealed";

/** Runs `useCase` under the request's key and answers it with `answer` (pure, in the unit). */
export async function runIdempotently<T, A extends Answer>(
  database: Database,
  request: IdempotentRequest,
  useCase: UseCase<T>,
  answer: (value: T) => A,
): Promise<IdempotentOutcome<A>> {
  const { scope } = request;
  if (scope === null) {
    return { decision: "new", answer: answer(await database.writer.write(useCase)) };
  }
  const keys = keysInFlight(database);
  const held = JSON.stringify([scope.companyId, scope.scopeLine, scope.key]);
  const running = keys.get(held);
  if (running && running.until > request.now) {
    return { decision: running.fingerprint === request.fingerprint ? "in_progress" : "mismatch" };
  }
  const mine = { fingerprint: request.fingerprint, until: request.now + request.leaseMs };
  keys.set(held, mine);
  let outcome: Exclude<KeyLookup, { decision: "new" }> | { decision: "new"; answer: A };
  try {
    // The answering unit's lookup tells whether the claim was taken: a record carrying this
    // request's lease is its own. (Two requests of one body at the same millisecond would share
    // it; the answering units still run one after the other, and the second replays the first.)
    const ownLease = database.shared ? mine.until : null;
    if (ownLease !== null) {
      await database.writer.write((tx) => {
        claimIdempotencyKey(tx, scope, request.fingerprint, {
          now: request.now,
          leaseUntil: ownLease,
        });
        return Promise.resolve();
      });
    }
    try {
      outcome = await database.writer.write(async (tx) => {
        const lookupOptions = { now: request.now, ownLease };
        const seen: { lookup: KeyLookup | null } = { lookup: null };
        // The lookup rides with the use case's first round trip instead of one of its own: a key
        // that may not run stops the use case at that statement, and the unit undoes what it sent.
        deferIdempotencyLookup(tx, scope, request.fingerprint, lookupOptions, (lookup) => {
          seen.lookup = lookup;
          refuseUnlessNew(lookup);
        });
        // Whatever the use case did, the unit ends only once it has seen the record say "new".
        // Unseen, the record is read now: the use case sent nothing, or a statement sent with the
        // lookup failed first (the unique row a finished duplicate created), which the batch
        // stops at before the lookup's result is checked.
        const keyIsFree = async () =>
          refuseUnlessNew(
            seen.lookup ??
              await lookUpIdempotencyKey(tx, scope, request.fingerprint, lookupOptions),
          );
        let value: T;
        try {
          value = await tx.attempt(useCase);
        } catch (error) {
          await keyIsFree();
          throw error;
        }
        await keyIsFree();
        const answered = answer(value);
        if (!answered.retryable) await keep(tx, request, answered);
        // A refusal that may pass later keeps nothing: the same key may try again at once.
        else if (ownLease !== null) await releaseIdempotencyClaim(tx, scope, ownLease);
        return { decision: "new" as const, answer: answered };
      });
    } catch (error) {
      if (!(error instanceof KeyNotFree)) {
        // The use case failed and its unit wrote nothing: the key is free again at once, not at
        // the end of the lease (a failed release leaves it to the lease).
        if (ownLease !== null) {
          await database.writer.write((tx) => releaseIdempotencyClaim(tx, scope, ownLease))
            .catch(() => {});
        }
        throw error;
      }
      outcome = error.lookup;
    }
  } finally {
    // A later request may have taken the key after this one's lease ran out: leave it to that one.
    if (keys.get(held) === mine) keys.delete(held);
  }
  return await answerOf(outcome, request);
}

/** The key's record says not to run the use case: its unit is undone and the lookup answered. */
class KeyNotFree extends Error {
  constructor(readonly lookup: Exclude<KeyLookup, { decision: "new" }>) {
    super(`idempotency key not free: ${lookup.decision}`);
    this.name = "KeyNotFree";
  }
}

function refuseUnlessNew(lookup: KeyLookup): void {
  if (lookup.decision !== "new") throw new KeyNotFree(lookup);
}

/** The outcome of a looked-up key: a stored answer opened for replay, or the decision as is. */
async function answerOf<A extends Answer>(
  outcome: Exclude<KeyLookup, { decision: "new" }> | { decision: "new"; answer: A },
  request: IdempotentRequest,
): Promise<IdempotentOutcome<A>> {
  if (outcome.decision !== "replay") return outcome;
  const { status, headers, body } = outcome.response;
  return {
    decision: "replay",
    answer: {
      status,
      contentType: headers["content-type"],
      body: headers[SEALED_HEADER]
        ? await request.secretBox.open(new TextDecoder().decode(body))
        : body,
    },
  };
}

/** Stores the answer to replay, in the unit that made the business change. */
async function keep(tx: WriteTx, request: IdempotentRequest, answered: Answer): Promise<void> {
  // Sealing is CPU work of microseconds; the unit still waits on nothing but the database.
  const body = answered.sensitive
    ? new TextEncoder().encode(await request.secretBox.seal(answered.body))
    : answered.body;
  await storeIdempotentResponse(tx, request.scope!, request.fingerprint, {
    status: answered.status,
    headers: {
      "content-type": answered.contentType,
      ...(answered.sensitive ? { [SEALED_HEADER]: "v1" } : {}),
    },
    body,
  }, { now: request.now, ttlMs: request.ttlMs });
}

/** Keys of requests this process is running, per database. */
const inFlightByDatabase = new WeakMap<
  Database,
  Map<string, { fingerprint: string; until: number }>
>();

function keysInFlight(database: Database): Map<string, { fingerprint: string; until: number }> {
  let keys = inFlightByDatabase.get(database);
  if (!keys) inFlightByDatabase.set(database, keys = new Map());
  return keys;
}
