/**
 * The PayPal rail's own jobs; its batches' transmission and in-doubt resolution are the rail
 * engine's (lib/rails/engine.ts, through the adapter in rail.ts), which creates a batch at PayPal
 * under sender_batch_id = the batch's id and, finding one `transmitting`, sends it again (PayPal
 * answers with the first batch and never pays twice) unless it is older than PayPal's 30 days of
 * memory: it then goes in doubt. `paypal.cutoff` (per company, every five minutes while items
 * wait) gathers the queued entries into a built batch. `paypal.poll` (per open batch, with
 * backoff) and `paypal.notice` (per verified webhook) read the items from PayPal and act on what
 * PayPal says (lib/paypal/rules.ts). `paypal.retry_item` sends an item the insurer's PayPal
 * balance could not cover again, in a batch of its own.
 */
import { externalJob, type JobHandler } from "../../db/scheduler.ts";
import { type DueJob, scheduleJob } from "../../db/scheduler_store.ts";
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { Database } from "../../db/client.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";
import { recordLateReturn } from "../payouts/store.ts";
import { recordEntryException } from "../rails/exceptions.ts";
import {
  BATCH_ENTRIES_MAX,
  BATCH_TRANSMIT_LEASE_MS,
  type BatchPayoutMoves,
  type BatchSend,
  batchSendJob,
  loadBatch,
  sendAfterTransmission,
  settleBatchEntry,
  type TransmitAnswer,
} from "../rails/batch.ts";
import { type BatchAdapter, type RailPolicy, scheduleTransmission } from "../rails/engine.ts";
import { cutoffJobHandler, type CutoffRail, type CutoffSlot } from "../rails/cutoff.ts";
import {
  type PayoutItemAnswer,
  type PayoutItemRequest,
  PaypalClient,
  type PaypalConnection,
} from "./client.ts";
import {
  deniedItemAction,
  type EntryState,
  INSUFFICIENT_FUNDS,
  itemAction,
  PAYPAL_FUNDS_RETRY_MS,
  PAYPAL_RESUBMIT_AGE_MAX_MS,
  PAYPAL_TRANSMIT_WINDOW_MS,
  paypalAmountValue,
  paypalCutoff,
  pollDelayMs,
} from "./rules.ts";
import type { ProviderReach } from "../rails/provider_reach.ts";
import {
  batchCarriesEntries,
  batchHasItems,
  batchHasOpenItems,
  entryAmount,
  findItemByReference,
  insertBatchItems,
  type ItemRecord,
  itemsToSend,
  type ItemToSend,
  loadOpenNotice,
  markNoticeProcessed,
  PAYPAL_BATCH_JOBS,
  PAYPAL_CUTOFF,
  PAYPAL_JOBS,
  PAYPAL_RAIL,
  pendingJob,
  queuePaypalEntry,
  rebatchItem,
  recordItemState,
} from "./store.ts";

export interface PaypalRailDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  /** How long one call to PayPal may take (PAYPAL_CALL_TIMEOUT_MS unless a test shortens it). */
  readonly paypalTimeoutMs?: number;
  readonly policy: RailPolicy;
  /** Items one batch takes at most (BATCH_ENTRIES_MAX unless a test lowers it). */
  readonly batchEntriesMax?: number;
  /** The PayPal each company is paid through (its own, else the environment's simulator). */
  readonly paypal: ProviderReach<PaypalConnection>;
}

/** A claim on PayPal calls: a batch of 10,000 items and its answer fit in it. */
export const PAYPAL_CALL_LEASE_MS = BATCH_TRANSMIT_LEASE_MS;

/** Why a company's PayPal calls cannot be made: it has no PayPal settings (live). */
export const noPaypalSettings = (companyId: string) =>
  `company ${companyId} has no PayPal settings in this environment: save them with paypal:set`;

/** The company's connection, which a poll or a notice of its items cannot go without. */
async function connectionOrThrow(
  deps: Pick<PaypalRailDeps, "paypal">,
  reader: SqlReader,
  companyId: string,
): Promise<PaypalConnection> {
  const connection = await deps.paypal.read(reader, companyId);
  if (!connection) throw new Error(noPaypalSettings(companyId));
  return connection;
}

/** Loud on purpose: an operator must add money to the PayPal account (the payee did nothing wrong). */
function alertInsufficientFunds(fields: Record<string, unknown>): void {
  console.error(JSON.stringify({
    level: "error",
    alert: "paypal_insufficient_funds",
    msg:
      "the PayPal balance does not cover the payout: add money to the PayPal account; the item is sent again",
    ...fields,
  }));
}

async function scheduleOnce(
  tx: WriteTx,
  job: { companyId: string; kind: string; subjectId: string; dueAt: number; payload?: object },
  now: number,
): Promise<void> {
  if (await pendingJob(tx, job.companyId, job.kind, job.subjectId)) return;
  await scheduleJob(tx, { ...job, payload: { ...job.payload } }, now);
}

/** Schedules the `attempt`-th poll of an open batch. */
function schedulePoll(
  tx: WriteTx,
  companyId: string,
  batchId: string,
  after: number,
  attempt: number,
) {
  return scheduleOnce(tx, {
    companyId,
    kind: PAYPAL_JOBS.poll,
    subjectId: batchId,
    dueAt: after + pollDelayMs(attempt),
    payload: { attempt },
  }, after);
}

const entryStateOf = (status: string): EntryState =>
  status === "sent" || status === "completed" || status === "failed" ? status : "other";

/**
 * Acts on what PayPal said of one item when asked: keeps it, then completes or fails the payout,
 * posts a refund after completion as a late return, or (the insurer's balance fell short) alerts
 * and sends the item again. An item of a batch PayPal denied fails (`paypal_batch_denied`). An
 * answer about a batch the item no longer rides is old news.
 */
export async function applyItemAnswer(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  item: ItemRecord,
  answer: PayoutItemAnswer & { readonly batchStatus: string | null },
  now: number,
): Promise<void> {
  if (item.payoutBatchId !== answer.payout_batch_id) return;
  const errorName = answer.errors?.name ?? null;
  await recordItemState(tx, item.entryId, {
    payoutItemId: answer.payout_item_id,
    status: answer.transaction_status,
    errorName,
  }, now);
  const entry = entryStateOf(item.entryStatus);
  const action = answer.batchStatus === "DENIED"
    ? deniedItemAction(entry)
    : itemAction(answer.transaction_status, errorName, entry);
  switch (action.kind) {
    case "wait":
      return;
    case "complete":
    case "fail": {
      const settled = await settleBatchEntry(
        tx,
        moves,
        item.reference,
        action.kind === "complete" ? { kind: "completed" } : {
          kind: "failed",
          reason: action.reason,
          returnCode: answer.batchStatus === "DENIED"
            ? "DENIED"
            : errorName ?? answer.transaction_status,
        },
        now,
      );
      if (!settled.ok) throw new Error(`PayPal item ${answer.payout_item_id}: ${settled.message}`);
      return;
    }
    case "late_return": {
      const returned = await recordLateReturn(tx, item.payoutId, "refunded", now);
      // Told twice (a poll and a webhook): the money came back once.
      if (!returned.ok && returned.code !== "already_returned") {
        // A refund of a payout that did not complete (canceled while its item flew): an operator decides.
        await recordEntryException(
          tx,
          item.entryId,
          {
            kind: "failed",
            reason: "refunded",
            returnCode: answer.transaction_status,
          },
          returned.message,
          now,
        );
      }
      return;
    }
    case "retry_for_funds":
      alertInsufficientFunds({
        company_id: item.companyId,
        payout_id: item.payoutId,
        payout_item_id: answer.payout_item_id,
        retry_at: new Date(now + PAYPAL_FUNDS_RETRY_MS).toISOString(),
      });
      await scheduleOnce(tx, {
        companyId: item.companyId,
        kind: PAYPAL_JOBS.retryItem,
        subjectId: item.entryId,
        dueAt: now + PAYPAL_FUNDS_RETRY_MS,
      }, now);
      return;
  }
}

/** What PayPal said of some items: the items, and their batch's status when it was read. */
interface ItemAnswers {
  readonly items: readonly PayoutItemAnswer[];
  readonly batchStatus: string | null;
}

/** Acts on the answers PayPal gave of a company's items, each found by its sender_item_id. */
async function applyItemAnswers(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  companyId: string,
  answers: ItemAnswers,
  now: number,
): Promise<void> {
  for (const answer of answers.items) {
    const item = await findItemByReference(tx, companyId, answer.payout_item.sender_item_id);
    if (item) {
      await applyItemAnswer(tx, moves, item, { ...answer, batchStatus: answers.batchStatus }, now);
    }
  }
}

/** A batch as PayPal reports it now: its items and its status. */
async function batchAnswers(paypal: PaypalClient, payoutBatchId: string): Promise<ItemAnswers> {
  const batch = await paypal.getBatch(payoutBatchId);
  return { items: batch.items, batchStatus: batch.batch_header.batch_status };
}

/** What a transmission hands to PayPal; no connection: the company has no settings (held). */
interface Transmission {
  readonly batchId: string;
  readonly companyId: string;
  readonly connection: PaypalConnection | null;
  readonly items: readonly PayoutItemRequest[];
}

function itemRequest(item: ItemToSend): PayoutItemRequest {
  if (item.receiver === null) {
    throw new Error(`PayPal item ${item.reference} has no receiver (${item.wallet} account)`);
  }
  return {
    recipient_type: item.wallet === "VENMO" ? "PHONE" : "EMAIL",
    recipient_wallet: item.wallet,
    receiver: item.receiver,
    amount: { currency: "USD", value: paypalAmountValue(item.amountCents) },
    sender_item_id: item.reference,
    note: "Claim payment",
  };
}

async function createBatch(deps: PaypalRailDeps, request: Transmission): Promise<TransmitAnswer> {
  if (!request.connection) {
    return {
      kind: "not_transmitted",
      reason: noPaypalSettings(request.companyId),
      retryAfterMs: null,
    };
  }
  const answer = await new PaypalClient(request.connection, deps.paypalTimeoutMs)
    .createBatch(request.batchId, request.items);
  // A duplicate is PayPal's answer to a batch it took before the first answer was recorded.
  if (answer.kind !== "refused") {
    return { kind: "transmitted", railReference: answer.payoutBatchId };
  }
  const { error, status } = answer;
  const reason =
    `PayPal refused the batch: ${status} ${error.name} (${error.message}, debug_id ${error.debug_id})`;
  if (error.name !== INSUFFICIENT_FUNDS) {
    return { kind: "not_transmitted", reason, retryAfterMs: null };
  }
  alertInsufficientFunds({ batch_id: request.batchId });
  return { kind: "not_transmitted", reason, retryAfterMs: PAYPAL_FUNDS_RETRY_MS };
}

/**
 * How PayPal batches are sent once PayPal took them: their items by the engine's send
 * (`paypal.send` beyond its first unit), then their polls begin.
 */
const PAYPAL_SEND: BatchSend = {
  job: PAYPAL_JOBS.send,
  allSent: (tx, batch, at) => schedulePoll(tx, batch.companyId, batch.id, at, 1),
};

/** The PayPal rail's part of the engine: batches created at PayPal under our batch id. */
export function paypalAdapter(deps: PaypalRailDeps, moves: BatchPayoutMoves): BatchAdapter {
  const adapter: BatchAdapter<Transmission> = {
    rails: [PAYPAL_RAIL],
    label: "PayPal batch",
    objectType: "paypal_batch",
    commandPrefix: "paypal",
    jobs: PAYPAL_BATCH_JOBS,
    notReceived: "void",
    // PayPal refuses a sender_batch_id it has seen in its last 30 days: within them a batch sent
    // again is never paid twice; after them it may have forgotten, and sending could pay twice.
    retransmitsSafely: (batch, now) => now - batch.createdAt <= PAYPAL_RESUBMIT_AGE_MAX_MS,
    async hold(tx, batch) {
      // Read before the batch is claimed: an item PayPal could not be sent leaves it built.
      const items = (await itemsToSend(tx, batch.id)).map(itemRequest);
      // A cutoff's batch carries its entries; an item sent again after a shortfall rides a batch
      // of its own, its entry sent and released with its first batch: it has neither a release
      // nor a window of its own, it goes until PayPal takes it.
      const cutoffBatch = await batchCarriesEntries(tx, batch.id);
      const connection = await deps.paypal.read(tx, batch.companyId);
      return {
        request: { batchId: batch.id, companyId: batch.companyId, connection, items },
        uploads: true,
        releaseCents: cutoffBatch ? batch.totalCents : null,
        windowEndsAt: cutoffBatch ? batch.cutoffAt + PAYPAL_TRANSMIT_WINDOW_MS : null,
        heldBy: connection
          ? null
          : `PayPal batch ${batch.id} is held: ${noPaypalSettings(batch.companyId)}`,
      };
    },
    transmit: (request) => createBatch(deps, request),
    transmitted: (tx, batch, at) => sendAfterTransmission(tx, moves, PAYPAL_SEND, batch, at),
    requeue: queuePaypalEntry,
  };
  return adapter as BatchAdapter;
}

/**
 * What the PayPal rail brings to the engine's cutoff (`paypal.cutoff`, per company, every five
 * minutes while items wait): nothing to reserve nor to build; the recording unit keeps one PayPal
 * item per entry, PayPal or Venmo by the payout's method.
 */
function paypalCutoffRail(deps: PaypalRailDeps): CutoffRail<CutoffSlot, null, null> {
  return {
    ...PAYPAL_CUTOFF,
    entriesMax: deps.batchEntriesMax ?? BATCH_ENTRIES_MAX,
    cutoffs: () => Promise.resolve(paypalCutoff),
    entryMaxCents: () => null,
    pendingBesidesEntries: () => Promise.resolve(false),
    open: () => Promise.resolve({ railReference: null, reservation: null }),
    resume: () => Promise.resolve(null),
    claimed: () => Promise.resolve(),
    closing: () => Promise.resolve(false),
    recorded: batchHasItems,
    build: () => Promise.resolve(null),
    async record(tx, claim, _built, now) {
      await insertBatchItems(tx, claim.batchId, now);
      return null;
    },
  };
}

/** What a poll hands to its call. */
interface Poll {
  readonly batchId: string;
  readonly companyId: string;
  readonly payoutBatchId: string;
  readonly connection: PaypalConnection;
  readonly attempt: number;
}

async function preparePoll(tx: WriteTx, deps: PaypalRailDeps, job: DueJob): Promise<Poll | null> {
  const batch = await loadBatch(tx, job.subjectId);
  if (batch?.status !== "transmitted" || batch.railReference === null) return null;
  if (!await batchHasOpenItems(tx, batch.id)) return null;
  return {
    batchId: batch.id,
    companyId: batch.companyId,
    payoutBatchId: batch.railReference,
    connection: await connectionOrThrow(deps, tx, batch.companyId),
    attempt: typeof job.payload.attempt === "number" ? job.payload.attempt : 1,
  };
}

/** What a notice hands to its call. */
interface NoticeRead {
  readonly noticeId: string;
  readonly companyId: string;
  readonly eventType: string;
  readonly resourceId: string;
  readonly connection: PaypalConnection;
}

/** Whether a webhook's event names a batch (PAYMENT.PAYOUTSBATCH.*) rather than one item. */
export const namesBatch = (eventType: string) => eventType.startsWith("PAYMENT.PAYOUTSBATCH.");

/** The handlers of the PayPal rail's jobs. */
export function paypalJobHandlers(
  deps: PaypalRailDeps,
  moves: BatchPayoutMoves,
): Readonly<Record<string, JobHandler>> {
  const client = (connection: PaypalConnection) =>
    new PaypalClient(connection, deps.paypalTimeoutMs);
  return {
    [PAYPAL_JOBS.cutoff]: cutoffJobHandler(
      { policy: deps.policy, moves },
      paypalCutoffRail(deps),
      { writer: deps.database.writer, apiBusy: deps.runtime.apiBusy },
    ),
    [PAYPAL_JOBS.send]: batchSendJob(
      { writer: deps.database.writer, apiBusy: deps.runtime.apiBusy },
      moves,
      PAYPAL_SEND,
    ),
    [PAYPAL_JOBS.poll]: externalJob<Poll, { poll: Poll; answers: ItemAnswers }>({
      leaseMs: PAYPAL_CALL_LEASE_MS,
      prepare: (tx, job) => preparePoll(tx, deps, job),
      call: async (poll) => ({
        poll,
        answers: await batchAnswers(client(poll.connection), poll.payoutBatchId),
      }),
      record: async (tx, job, { poll, answers }) => {
        await applyItemAnswers(tx, moves, poll.companyId, answers, job.dueAt);
        if (await batchHasOpenItems(tx, poll.batchId)) {
          await schedulePoll(tx, poll.companyId, poll.batchId, job.dueAt, poll.attempt + 1);
        }
      },
    }),
    [PAYPAL_JOBS.notice]: externalJob<NoticeRead, { notice: NoticeRead; answers: ItemAnswers }>({
      leaseMs: PAYPAL_CALL_LEASE_MS,
      async prepare(tx, job) {
        const notice = await loadOpenNotice(tx, job.subjectId);
        if (!notice) return null;
        return {
          noticeId: notice.id,
          companyId: notice.companyId,
          eventType: notice.eventType,
          resourceId: notice.resourceId,
          connection: await connectionOrThrow(deps, tx, notice.companyId),
        };
      },
      // The webhook's body is never acted on: PayPal is asked what the item is now.
      call: async (notice) => {
        const paypal = client(notice.connection);
        if (namesBatch(notice.eventType)) {
          return { notice, answers: await batchAnswers(paypal, notice.resourceId) };
        }
        const item = await paypal.getItem(notice.resourceId);
        // A denied batch's items read FAILED with no error of their own: their batch tells why.
        const answers = item.transaction_status === "FAILED" && !item.errors
          ? await batchAnswers(paypal, item.payout_batch_id)
          : { items: [item], batchStatus: null };
        return { notice, answers };
      },
      record: async (tx, job, { notice, answers }) => {
        await applyItemAnswers(tx, moves, notice.companyId, answers, job.dueAt);
        await markNoticeProcessed(tx, notice.noticeId, job.dueAt);
      },
    }),
    [PAYPAL_JOBS.retryItem]: async (tx, job) => {
      const { rows } = await tx.execute({
        sql: "SELECT reference FROM rail_batch_entries WHERE id = ? AND status = 'sent'",
        args: [job.subjectId],
      });
      // Settled meanwhile (the payout may have been failed by an operator's cancel).
      if (!rows[0]) return;
      const item = await findItemByReference(tx, job.companyId, String(rows[0].reference));
      if (!item) return;
      const batchId = await rebatchItem(tx, item, await entryAmount(tx, item.entryId), job.dueAt);
      await scheduleTransmission(
        tx,
        PAYPAL_BATCH_JOBS,
        { companyId: job.companyId, id: batchId },
        job.dueAt,
        1,
      );
    },
  };
}
