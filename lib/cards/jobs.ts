/**
 * The virtual card rail's job: `card.check` reads a card from Lithic (at its expiry, when a
 * verified webhook names it, and while it waits to open) and acts on what Lithic says, never on
 * a webhook's body (lib/cards/rules.ts): a card that opened completes its payout, a card past its
 * expiry is closed, and a closed card whose transactions settled gives back its unspent balance
 * as a late return of that amount, once (owed to the payee as unclaimed property). Lithic is called outside every write unit.
 */
import { externalJob, type JobHandler, TransientJobError } from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import { applyMove, loadPayout, recordLateReturn } from "../payouts/store.ts";
import { submissionReference } from "../rails/seam.ts";
import { type LithicCard, LithicClient, type LithicReach } from "./client.ts";
import type { CardRailDeps } from "./rail.ts";
import { sandboxLithicJobs } from "./sandbox_lithic.ts";
import { CARD_RECHECK_MS, CARD_UNSPENT, cardAction, type CardTransaction } from "./rules.ts";
import {
  CARD_JOBS,
  findVirtualCard,
  recordCardReclaim,
  recordCardState,
  type VirtualCardRow,
} from "./store.ts";

/** A claim on one card's reads and its close. */
const CARD_CHECK_LEASE_MS = 60_000;

type PayoutSide = "sent" | "completed" | "reclaimed";

interface CardCheck {
  readonly card: VirtualCardRow;
  readonly side: PayoutSide;
  readonly reach: LithicReach;
  readonly now: number;
}

interface CardRead {
  readonly check: CardCheck;
  readonly lithic: LithicCard;
  readonly transactions: readonly CardTransaction[];
}

/** Where the card's payout stands for the card, or null when the payout no longer waits on it. */
async function payoutSide(tx: WriteTx, card: VirtualCardRow): Promise<PayoutSide | null> {
  const payout = await loadPayout(tx, card.payoutId);
  // Submitted again since (a later card), or never this card's: it moves nothing.
  if (!payout || submissionReference(payout.id, payout.submissionCount) !== card.reference) {
    return null;
  }
  if (payout.status === "funds_sent") return "sent";
  if (payout.status !== "completed") return null;
  return card.reclaimedCents === null ? "completed" : "reclaimed";
}

async function readCard(check: CardCheck, timeoutMs?: number): Promise<CardRead> {
  const lithic = await LithicClient.open(check.reach, timeoutMs);
  const { card } = check;
  try {
    let read = await lithic.card(card.cardToken);
    const side = { ...card, state: read.state };
    if (cardAction(side, check.side, [], check.now).kind === "close") {
      read = await lithic.closeCard(card.cardToken);
    }
    const transactions = read.state === "CLOSED" ? await lithic.transactions(card.cardToken) : [];
    return { check, lithic: read, transactions };
  } catch (error) {
    throw new TransientJobError(
      `Lithic did not answer for card ${card.cardToken}: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
}

async function applyCardRead(tx: WriteTx, read: CardRead, now: number): Promise<void> {
  const { card } = read.check;
  await recordCardState(tx, card.cardToken, read.lithic.state, now);
  const side = await payoutSide(tx, card);
  if (side === null) return;
  const action = cardAction({ ...card, state: read.lithic.state }, side, read.transactions, now);
  const recheck = (dueAt: number) =>
    scheduleJob(tx, {
      companyId: card.companyId,
      kind: CARD_JOBS.check,
      subjectId: card.cardToken,
      dueAt,
    }, now);
  switch (action.kind) {
    case "complete": {
      const moved = await applyMove(tx, card.payoutId, { kind: "complete" }, now);
      if (!moved.ok) throw new Error(`card ${card.cardToken}: ${moved.message}`);
      return;
    }
    case "reclaim": {
      const kept = await recordCardReclaim(tx, card.cardToken, {
        spentCents: card.spendLimitCents - action.unspentCents,
        reclaimedCents: action.unspentCents,
      }, now);
      if (!kept || action.unspentCents === 0) return;
      const returned = await recordLateReturn(tx, card.payoutId, CARD_UNSPENT, now, {
        returnedCents: action.unspentCents,
      });
      if (!returned.ok) throw new Error(`card ${card.cardToken}: ${returned.message}`);
      return;
    }
    case "close":
    case "wait":
      // Not open yet, a pending authorization, or a close Lithic has not applied: ask again later.
      if (side !== "reclaimed" && (read.lithic.state !== "OPEN" || now >= card.expiresAt)) {
        await recheck(now + (side === "sent" ? 60_000 : CARD_RECHECK_MS));
      }
      return;
  }
}

/** The handlers of the virtual card rail's jobs, and the sandbox's Lithic's when it is bound. */
export function cardJobHandlers(deps: CardRailDeps): Readonly<Record<string, JobHandler>> {
  const sandboxLithic = deps.sandboxLithic;
  return {
    ...(sandboxLithic ? sandboxLithicJobs({ ...deps, sandboxLithic }) : {}),
    [CARD_JOBS.check]: externalJob<CardCheck, CardRead>({
      leaseMs: CARD_CHECK_LEASE_MS,
      async prepare(tx, job) {
        const card = await findVirtualCard(tx, job.subjectId);
        if (!card) throw new Error(`${CARD_JOBS.check}: no card ${job.subjectId}`);
        const side = await payoutSide(tx, card);
        if (side === null || side === "reclaimed") return null;
        const reach = await deps.lithic.read(tx, card.companyId);
        if (!reach) throw new Error(`company ${card.companyId} has cards but no Lithic settings`);
        return { card, side, reach, now: deps.policy.jobTime(job) };
      },
      call: (check) => readCard(check, deps.lithicTimeoutMs),
      record: (tx, job, read) => applyCardRead(tx, read, deps.policy.jobTime(job)),
    }),
  };
}
