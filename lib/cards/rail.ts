/**
 * The virtual card rail: a payout's submission asks Lithic for one single-use card (spend limit =
 * the net amount, an expiry, merchant category limits when the company sets them) under the
 * submission's reference as its idempotency key, so a submission asked again after a crash gets
 * the same card. A card issued OPEN completes its payout (issued, its limit funded); the card is
 * kept, and checked (lib/cards/jobs.ts) at its expiry, when Lithic's webhooks say it changed, and
 * while it waits to open. Lithic is called outside every write unit. Which Lithic a company
 * reaches (its own, or the sandbox's in test) is the composition root's `lithic` reach.
 */
import { TransientJobError } from "../../db/scheduler.ts";
import type { Database } from "../../db/client.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { RailPolicy } from "../rails/engine.ts";
import type { PayoutRail, RailAnswer, RailSubmission } from "../rails/seam.ts";
import { type ProviderReach, submitThroughReach } from "../rails/provider_reach.ts";
import { LithicClient, type LithicReach } from "./client.ts";
import { cardExpiry, cardRequest } from "./rules.ts";
import { CARD_JOBS, insertVirtualCard } from "./store.ts";
import type { SandboxLithic } from "./sandbox_lithic.ts";

export interface CardRailDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly policy: RailPolicy;
  /** How long one call to Lithic may take (LITHIC_TIMEOUT_MS unless a test shortens it). */
  readonly lithicTimeoutMs?: number;
  /** The Lithic each company is paid through (its own, else the environment's simulator). */
  readonly lithic: ProviderReach<LithicReach>;
  /** The sandbox's Lithic when the composition root bound it: its payees' purchases are its jobs. */
  readonly sandboxLithic?: SandboxLithic | null;
}

/** A card not OPEN at issue is read again this soon. */
const OPEN_RECHECK_MS = 60_000;
/** The submission's term: when its card expires (ms). */
const EXPIRES_AT = "expires_at";

/** The expiry the submission's first attempt decided (its terms). */
function termsExpiry(submission: RailSubmission): number {
  const expiresAt = submission.terms?.[EXPIRES_AT];
  if (typeof expiresAt !== "number") {
    throw new Error(`the card of ${submission.reference} was submitted without its expiry`);
  }
  return expiresAt;
}

/** Asks Lithic for the submission's card, with the expiry its first attempt decided. */
async function issue(
  deps: CardRailDeps,
  submission: RailSubmission,
  reach: LithicReach,
): Promise<RailAnswer> {
  const { settings } = reach;
  const expiresAt = termsExpiry(submission);
  const request = cardRequest(submission.reference, submission.amountCents, expiresAt);
  const lithic = await LithicClient.open(reach, deps.lithicTimeoutMs);
  try {
    const issued = await lithic.issueCard(request, submission.reference);
    if (issued.kind === "refused") {
      return {
        kind: "refused",
        reason: "card_not_issued",
        message:
          `Lithic refused the card of ${submission.reference}: ${issued.status} ${issued.message}`,
      };
    }
    const card = issued.card;
    if (settings.allowedMccs.length > 0) {
      await lithic.limitMerchants(card.token, settings.allowedMccs);
    }
    return {
      kind: "accepted",
      railReference: card.token,
      outcome: card.state === "OPEN" ? { kind: "complete", at: submission.submittedAt } : null,
      facts: {
        card_token: card.token,
        last_four: card.lastFour,
        state: card.state,
        spend_limit_cents: card.spendLimitCents,
        expires_at: expiresAt,
      },
    };
  } catch (error) {
    // Unanswered: the job asks again under the same key, and Lithic answers with the same card.
    throw new TransientJobError(
      `Lithic did not answer the card of ${submission.reference}: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
}

/** The virtual card rail of one environment's database. */
export function cardRail(deps: CardRailDeps): PayoutRail {
  return {
    shape: "per_payout",
    configured: (reader, companyId) => deps.lithic.serves(reader, companyId),
    // The expiry, with the company's card_valid_days of the first attempt; kept for its retries.
    async terms(reader, submission) {
      const reach = await deps.lithic.read(reader, submission.companyId);
      if (!reach) throw new Error(`company ${submission.companyId} reaches no Lithic`);
      return { [EXPIRES_AT]: cardExpiry(submission.submittedAt, reach.settings.cardValidDays) };
    },
    submit: (submission) =>
      submitThroughReach(
        deps.lithic,
        { name: "Lithic", reader: deps.database.readClient },
        submission,
        (reach) => issue(deps, submission, reach),
      ),
    async accepted(tx, submission, answer, now) {
      const facts = answer.facts!;
      const expiresAt = Number(facts.expires_at);
      await insertVirtualCard(tx, {
        reference: submission.reference,
        payoutId: submission.payoutId,
        companyId: submission.companyId,
        cardToken: String(facts.card_token),
        lastFour: String(facts.last_four),
        spendLimitCents: Number(facts.spend_limit_cents),
        expiresAt,
        state: String(facts.state),
      }, now);
      const check = (dueAt: number) =>
        scheduleJob(tx, {
          companyId: submission.companyId,
          kind: CARD_JOBS.check,
          subjectId: String(facts.card_token),
          dueAt,
        }, now);
      await check(expiresAt);
      if (answer.outcome === null) await check(now + OPEN_RECHECK_MS);
    },
  };
}
