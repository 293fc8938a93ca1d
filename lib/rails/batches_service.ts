/**
 * What operators do with the batches of every rail (ACH files, check files, PayPal batches), one
 * set of rules for all: resolve an in-doubt batch with what the bank said, void a built one (its
 * entries queued again; a downloaded one goes in doubt instead), mark one handed over by hand as
 * sent, ask for the release of one over the approval limit, and download one (refused until its
 * release is approved; from then on it counts as possibly sent). Under dual control (live) a
 * resolution waits for a second admin (`bank_file.resolve`), as a release does
 * (`bank_file.release`); every change writes its audit row in its unit.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { requestApproval } from "../operators/approvals.ts";
import { batchAdapterOf, type BatchRailSet, type BatchRow, loadBatch } from "./batch.ts";
import {
  awaitsRelease,
  type BatchActionRefusal,
  type BatchAdapter,
  type EngineDeps,
  type InDoubtAnswer,
  recordDownload,
  recordTransmitted,
  resolveInDoubt,
  scheduleTransmission,
  voidOrDoubt,
} from "./engine.ts";

/** The environment's batch rails (as the composition root built them) and its databases. */
export interface BatchServiceDeps extends BatchRailSet {
  /** The environment's database. */
  readonly database: Database;
  /** The database holding approvals and operators (dual control). */
  readonly liveDatabase: Database;
  readonly secretBox: SecretBox;
}

/** What an action did: the batch's status after it, or the approval it waits for. */
export interface BatchActionResult {
  readonly batchId: string;
  readonly status: string;
  readonly approvalId: string | null;
}

const notFound = (batchId: string) =>
  refuse("batch_not_found", `no batch ${batchId}`, { field: "file" });

/** A built batch is what the action takes (`what`: "can be voided", "is released", …). */
const notBuilt = (adapter: BatchAdapter, batch: BatchRow, what: string) =>
  refuse(
    "batch_not_built",
    `${adapter.label} ${batch.id} is ${batch.status}; only a built file ${what}`,
    { field: "file", details: { status: batch.status } },
  );

/** A batch and its rail's adapter, or null when no rail of this environment has it. */
async function found(
  deps: BatchRailSet,
  reader: Pick<WriteTx, "execute">,
  batchId: string,
): Promise<{ batch: BatchRow; adapter: BatchAdapter; engine: EngineDeps } | null> {
  const batch = await loadBatch(reader, batchId);
  if (!batch) return null;
  const of = batchAdapterOf(deps, batch.rail);
  return of ? { batch, ...of } : null;
}

/** The operator of a request under dual control; such a command always has one. */
function signedIn(actor: AuditActor): AuditActor & { operator: { id: string; email: string } } {
  if (actor.operator === null) {
    throw new Error("a batch action under dual control needs an operator");
  }
  return actor as AuditActor & { operator: { id: string; email: string } };
}

async function askSecondAdmin(
  deps: BatchServiceDeps,
  actor: AuditActor,
  request: {
    kind: "bank_file.resolve" | "bank_file.release";
    batch: BatchRow;
    summary: string;
    payload: Record<string, unknown>;
  },
  now: number,
): Promise<Result<BatchActionResult, BatchActionRefusal | "approval_pending">> {
  const requested = await requestApproval(
    {
      databases: { test: deps.database, live: deps.liveDatabase },
      secretBox: deps.secretBox,
      dev: false,
    },
    signedIn(actor),
    {
      kind: request.kind,
      environment: "live",
      companyId: request.batch.companyId,
      objectId: request.batch.id,
      summary: request.summary,
      payload: request.payload,
    },
    now,
  );
  if (!requested.ok) return requested;
  return ok({
    batchId: request.batch.id,
    status: request.batch.status,
    approvalId: requested.value.id,
  });
}

/**
 * `rail:resolve`: what the bank (or provider) said of an in-doubt batch of any rail; at once
 * without dual control, else once a second admin approves.
 */
export async function resolveBatch(
  deps: BatchServiceDeps,
  actor: AuditActor,
  batchId: string,
  as: InDoubtAnswer,
  now: number,
): Promise<Result<BatchActionResult, BatchActionRefusal | "approval_pending">> {
  const read = await found(deps, deps.database.readClient, batchId);
  if (!read) return notFound(batchId);
  if (!read.engine.policy.dualControl) {
    return await deps.database.writer.write(async (tx) => {
      const resolved = await resolveInDoubt(tx, read.engine, read.adapter, actor, batchId, as, now);
      return resolved.ok
        ? ok({ batchId, status: resolved.value.status, approvalId: null })
        : tx.abort(resolved);
    });
  }
  if (read.batch.status !== "in_doubt") {
    return refuse(
      "batch_not_in_doubt",
      `${read.adapter.label} ${batchId} is ${read.batch.status}; only an in-doubt batch is resolved`,
      { field: "file", details: { status: read.batch.status } },
    );
  }
  return await askSecondAdmin(deps, actor, {
    kind: "bank_file.resolve",
    batch: read.batch,
    summary: `mark in-doubt ${read.adapter.label} ${batchId} ${as}`,
    payload: { as },
  }, now);
}

/**
 * An operator voids a built batch: its entries are queued again under new references, unless it
 * was downloaded and never marked sent, when it goes in doubt (`rail:resolve` decides).
 */
export function voidBuiltBatch(
  deps: BatchServiceDeps,
  actor: AuditActor,
  batchId: string,
  now: number,
): Promise<Result<BatchActionResult, BatchActionRefusal>> {
  return deps.database.writer.write(async (tx) => {
    const read = await found(deps, tx, batchId);
    if (!read) return tx.abort(notFound(batchId));
    if (read.batch.status !== "built") {
      return tx.abort(notBuilt(read.adapter, read.batch, "can be voided"));
    }
    const voided = await voidOrDoubt(tx, read.engine, read.adapter, batchId, {
      actor,
      reason: "voided by an operator",
    }, now);
    return ok({ batchId, status: voided.status, approvalId: null });
  });
}

/**
 * An operator handed a built batch over by hand (uploaded, printed): it is transmitted, with what
 * follows. Only a batch that waits for that (no transport), is held by nothing and needs no
 * release, or whose release was approved.
 */
export function markBatchSent(
  deps: BatchServiceDeps,
  actor: AuditActor,
  batchId: string,
  now: number,
): Promise<Result<BatchActionResult, BatchActionRefusal>> {
  return deps.database.writer.write(async (tx) => {
    const read = await found(deps, tx, batchId);
    if (!read) return tx.abort(notFound(batchId));
    const { batch, adapter, engine } = read;
    if (batch.status !== "built") return tx.abort(notBuilt(adapter, batch, "can be marked sent"));
    const held = await adapter.hold(tx, batch);
    if (!held) return tx.abort(notFound(batchId));
    if (held.uploads) {
      return tx.abort(refuse(
        "batch_uploads",
        `${adapter.label} ${batchId} goes to the bank by its transport; only a file that waits for download is marked sent by hand`,
        { field: "file" },
      ));
    }
    if (held.heldBy !== null) {
      return tx.abort(refuse("batch_held", held.heldBy, { field: "file" }));
    }
    if (await awaitsRelease(engine.policy, tx, batchId, held.releaseCents)) {
      return tx.abort(refuse(
        "batch_awaits_release",
        `${adapter.label} ${batchId} is over the approval limit and its release is not approved`,
        { field: "file" },
      ));
    }
    await recordTransmitted(tx, adapter, batchId, batch.railReference ?? batchId, now);
    await appendAudit(tx, engine.policy.environment, actor, {
      at: now,
      action: `${adapter.commandPrefix}:mark-sent`,
      objectType: adapter.objectType,
      objectId: batchId,
      companyId: batch.companyId,
      before: { id: batchId, status: "built" },
      after: { id: batchId, status: "transmitted" },
    });
    return ok({ batchId, status: "transmitted", approvalId: null });
  });
}

/**
 * Asks a second admin to release a built batch over the approval limit; approved, it is
 * transmitted (or may be downloaded and marked sent). A batch something else holds (a print file
 * before its positive-pay file, a PayPal batch of a company without settings) is refused.
 */
export async function requestBatchRelease(
  deps: BatchServiceDeps,
  actor: AuditActor,
  batchId: string,
  now: number,
): Promise<Result<BatchActionResult, BatchActionRefusal | "approval_pending">> {
  const read = await deps.database.writer.write(async (tx) => {
    const read = await found(deps, tx, batchId);
    if (!read) return null;
    const held = await read.adapter.hold(tx, read.batch);
    const waits = held !== null && read.batch.status === "built" &&
      await awaitsRelease(read.engine.policy, tx, batchId, held.releaseCents);
    return {
      ...read,
      waits,
      releaseCents: held?.releaseCents ?? null,
      heldBy: held?.heldBy ?? null,
    };
  });
  if (!read) return notFound(batchId);
  if (read.batch.status !== "built") return notBuilt(read.adapter, read.batch, "is released");
  // A release would not send it: what holds it must change first.
  if (read.heldBy !== null) return refuse("batch_held", read.heldBy, { field: "file" });
  if (!read.waits) {
    return refuse(
      "batch_awaits_release",
      `${read.adapter.label} ${batchId} needs no release: it is within the approval limit, follows another file, or was approved`,
      { field: "file" },
    );
  }
  return await askSecondAdmin(deps, actor, {
    kind: "bank_file.release",
    batch: read.batch,
    summary: `release ${read.adapter.label} ${
      read.batch.railReference ?? batchId
    } (${read.releaseCents} cents)`,
    payload: {},
  }, now);
}

/** A second admin's approval of a batch action, as its approved action is given it. */
export interface ApprovedBatchAction {
  readonly kind: "bank_file.release" | "bank_file.resolve";
  readonly approvalId: string;
  readonly batchId: string;
  /** A resolution's answer, as the first admin gave it. */
  readonly as: InDoubtAnswer;
}

/**
 * What an approved batch action runs in the approval's unit: a release schedules the batch's
 * transmission at once (a transport takes it; without one it may now be downloaded and marked
 * sent); a resolution resolves the batch with the first admin's answer.
 */
export async function runApprovedBatchAction(
  tx: WriteTx,
  deps: BatchRailSet,
  actor: AuditActor,
  action: ApprovedBatchAction,
  now: number,
): Promise<Result<Record<string, unknown>, BatchActionRefusal>> {
  const { batchId } = action;
  const read = await found(deps, tx, batchId);
  if (!read) return notFound(batchId);
  const { batch, adapter, engine } = read;
  if (action.kind === "bank_file.resolve") {
    const resolved = await resolveInDoubt(tx, engine, adapter, actor, batchId, action.as, now);
    return resolved.ok ? ok({ file_id: batchId, status: resolved.value.status }) : resolved;
  }
  if (batch.status !== "built") return notBuilt(adapter, batch, "is released");
  await adapter.released?.(tx, batch, action.approvalId);
  await scheduleTransmission(tx, adapter.jobs, batch, now, 1);
  await appendAudit(tx, engine.policy.environment, actor, {
    at: now,
    action: `${adapter.commandPrefix}:release`,
    objectType: adapter.objectType,
    objectId: batchId,
    companyId: batch.companyId,
    before: { id: batchId, status: "built" },
    after: { id: batchId, status: "built", released: true },
  });
  return ok({ file_id: batchId, status: "built", released: true });
}

/**
 * A download of a batch's file to hand it over: refused while its release waits for a second
 * admin; the first download of a built file is kept (it may be at the bank from then on).
 */
export function recordBatchDownload(
  deps: BatchServiceDeps,
  batchId: string,
  now: number,
): Promise<Result<BatchRow, BatchActionRefusal>> {
  return deps.database.writer.write(async (tx) => {
    const read = await found(deps, tx, batchId);
    if (!read) return tx.abort(notFound(batchId));
    const downloaded = await recordDownload(tx, read.engine, read.adapter, batchId, now);
    return downloaded.ok ? downloaded : tx.abort(downloaded);
  });
}
