/**
 * An idempotent request as ONE write unit (contract §7): the key's record is looked up, the use
 * case run and the answer to replay stored together, so a crash leaves all or nothing and a
 * duplicate queued behind the first finds the stored answer. The lookup is sent with the use case's
 * first statements (no round trip of its own on a libSQL server); a key that may not run fails the
 * unit there, so nothing the use case sent is kept. A use case that aborts has its writes undone
 * while the answer to its refusal is still stored. While the first runs, this process holds its
 * key in memory (at most the lease): a duplicate is told so at once instead of waiting. Requests of
 * a batched use case queued for the same group share one unit: their keys read at once, the use
 * case run set-based, their answers kept in one write (answerTogether).
 *
 * A database several nodes share (a libSQL server) is written by other processes, whose memory
 * this one cannot see: there the request first commits a claim with the lease in the database
 * (one more unit, one round trip), so a duplicate sent to any node gets 409 while the first runs,
 * and the key's fate is still decided by the unit that stores the answer. The embedded file,
 * written by this process alone, keeps the single unit.
 */
import type { Database } from "../../db/client.ts";
import { RUN_ALONE, type RunAlone, type UnitBatch, type WriteTx } from "../../db/writer.ts";
import type { SecretBox } from "../platform/crypto.ts";
import {
  claimIdempotencyKey,
  deferIdempotencyLookup,
  type IdempotencyScope,
  type KeyLookup,
  lookUpIdempotencyKey,
  lookUpIdempotencyKeys,
  releaseIdempotencyClaim,
  storeIdempotentResponses,
} from "./store.ts";

export type { IdempotencyScope } from "./store.ts";

/** A use case bound to its input, run inside the request's write unit. */
export type UseCase<T> = (tx: WriteTx) => Promise<T>;

/**
 * A use case the writer may run set-based for the requests queued at the same moment: `one` runs
 * one input in its own unit (a refusal aborts it), `many` several in one unit, a value each in
 * order (a refusal writes nothing) or RUN_ALONE for one it leaves to `one`.
 */
export interface UseCaseBatch<I, T> {
  one(input: I): UseCase<T>;
  many(tx: WriteTx, inputs: readonly I[]): Promise<(T | RunAlone)[]>;
}

/** A use case's input, run with others of its batch when they are queued together. */
export interface BatchedUseCase<I, T> {
  readonly batch: UseCaseBatch<I, T>;
  readonly input: I;
}

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
  useCase: UseCase<T> | BatchedUseCase<unknown, T>,
  answer: (value: T) => A,
): Promise<IdempotentOutcome<A>> {
  const { scope } = request;
  if (scope === null) {
    const run = isUseCase(useCase) ? useCase : useCase.batch.one(useCase.input);
    return { decision: "new", answer: answer(await database.writer.write(run)) };
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
      const answering: AnsweringRequest<T, A> = { request, useCase, answer, ownLease };
      // A request's write: its sync may run off the thread while other requests are answered.
      outcome = ownLease === null && !isUseCase(useCase)
        ? await database.writer.writeTogether(answeringBatchOf(useCase.batch), answering, {
          pipelined: true,
        })
        : await database.writer.write(answeringUnit(answering), { pipelined: true });
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

const isUseCase = <T>(useCase: UseCase<T> | BatchedUseCase<unknown, T>): useCase is UseCase<T> =>
  typeof useCase === "function";

/** What the unit that answers a keyed request needs. */
interface AnsweringRequest<T, A extends Answer> {
  readonly request: IdempotentRequest;
  readonly useCase: UseCase<T> | BatchedUseCase<unknown, T>;
  readonly answer: (value: T) => A;
  /** The lease of this request's committed claim (a shared database), else null. */
  readonly ownLease: number | null;
}

type AnsweredOutcome<A extends Answer> =
  | Exclude<KeyLookup, { decision: "new" }>
  | { decision: "new"; answer: A };

/**
 * The unit that answers one keyed request: the key looked up, the use case run, the answer kept.
 * A key that may not run throws KeyNotFree, so nothing the use case sent is kept.
 */
function answeringUnit<T, A extends Answer>(
  answering: AnsweringRequest<T, A>,
): (tx: WriteTx) => Promise<AnsweredOutcome<A>> {
  const { request, answer, ownLease } = answering;
  const scope = request.scope!;
  const useCase = isUseCase(answering.useCase)
    ? answering.useCase
    : answering.useCase.batch.one(answering.useCase.input);
  return async (tx) => {
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
  };
}

/** The answering batch of each use case batch: one identity per kind, for the writer to group. */
const answeringBatches = new WeakMap<object, UnitBatch<unknown, unknown>>();

function answeringBatchOf<T, A extends Answer>(
  batch: UseCaseBatch<unknown, T>,
): UnitBatch<AnsweringRequest<T, A>, AnsweredOutcome<A>> {
  let answeringBatch = answeringBatches.get(batch);
  if (answeringBatch === undefined) {
    const made: UnitBatch<AnsweringRequest<T, A>, AnsweredOutcome<A>> = {
      one: answeringUnit,
      many: (tx, inputs) => answerTogether(tx, batch, inputs),
    };
    answeringBatches.set(batch, answeringBatch = made as UnitBatch<unknown, unknown>);
  }
  return answeringBatch as UnitBatch<AnsweringRequest<T, A>, AnsweredOutcome<A>>;
}

/**
 * Keyed requests of one use case batch answered in one unit: their keys looked up in one read,
 * the use case run set-based for those whose key is new, and their answers kept in one write. A
 * key that may not run is answered by its record and runs nothing; a key twice in one batch runs
 * once here, the other alone after it (where it finds the first's answer).
 */
async function answerTogether<T, A extends Answer>(
  tx: WriteTx,
  batch: UseCaseBatch<unknown, T>,
  items: readonly AnsweringRequest<T, A>[],
): Promise<(AnsweredOutcome<A> | RunAlone)[]> {
  const lookups = await lookUpIdempotencyKeys(
    tx,
    items.map(({ request }) => ({ scope: request.scope!, fingerprint: request.fingerprint })),
    items.map(({ request }) => ({ now: request.now, ownLease: null })),
  );
  const outcomes: (AnsweredOutcome<A> | RunAlone)[] = lookups.map((lookup) =>
    lookup.decision === "new" ? RUN_ALONE : lookup
  );
  const seen = new Set<string>();
  const running = items.flatMap((item, i) => {
    const held = JSON.stringify([
      item.request.scope!.companyId,
      item.request.scope!.scopeLine,
      item.request.scope!.key,
    ]);
    if (lookups[i].decision !== "new" || seen.has(held)) return [];
    seen.add(held);
    return [i];
  });
  // Every key answered by its record (a burst of retries): the use case has nothing to run.
  if (running.length === 0) return outcomes;
  const values = await batch.many(
    tx,
    running.map((i) => (items[i].useCase as BatchedUseCase<unknown, T>).input),
  );
  const kept: { request: IdempotentRequest; answered: A }[] = [];
  running.forEach((i, n) => {
    const value = values[n];
    if (value === RUN_ALONE) return;
    const answered = items[i].answer(value);
    // A refusal that may pass later keeps nothing: the same key may try again at once.
    if (!answered.retryable) kept.push({ request: items[i].request, answered });
    outcomes[i] = { decision: "new", answer: answered };
  });
  await keepAll(tx, kept);
  return outcomes;
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
function keep(tx: WriteTx, request: IdempotentRequest, answered: Answer): Promise<void> {
  return keepAll(tx, [{ request, answered }]);
}

/** Stores the answers of several requests to replay, in one write. */
async function keepAll(
  tx: WriteTx,
  kept: readonly { request: IdempotentRequest; answered: Answer }[],
): Promise<void> {
  if (kept.length === 0) return;
  const records = await Promise.all(kept.map(async ({ request, answered }) => ({
    scope: request.scope!,
    fingerprint: request.fingerprint,
    response: {
      status: answered.status,
      headers: {
        "content-type": answered.contentType,
        ...(answered.sensitive ? { [SEALED_HEADER]: "v1" } : {}),
      },
      // Sealing is CPU work of microseconds; the unit still waits on nothing but the database.
      body: answered.sensitive
        ? new TextEncoder().encode(await request.secretBox.seal(answered.body))
        : answered.body,
    },
    now: request.now,
    ttlMs: request.ttlMs,
  })));
  storeIdempotentResponses(tx, records);
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
