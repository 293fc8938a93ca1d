/**
 * The instant deposit rail: a push to the payee's debit card through Increase. The payee typed the
 * card at the tokenization provider's hosted page, so the payout keeps only Increase's card token,
 * the cardholder's name and ZIP. A submission, outside every write unit: the token's capabilities
 * must offer a domestic push route (else `card_not_eligible`); a $0 card validation with the name
 * and ZIP must be accepted without a mismatch (else `card_declined`); then one card push transfer
 * under the submission's reference as Idempotency-Key. A push is final: a decline re-offers the
 * payout, a call left unanswered is asked again under the same keys, and Increase answers with
 * the validation and the transfer it already has, so nothing is pushed twice. What the push
 * becomes comes by webhooks and polling (lib/instant/jobs.ts). A test company without Increase
 * settings goes through the same steps against the Increase simulator (its `increase` reach).
 */
import { TransientJobError } from "../../db/scheduler.ts";
import type { Database } from "../../db/client.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { decimalAmount } from "../platform/money.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";
import { recordMethodDetail } from "../payouts/store.ts";
import type { RailPolicy } from "../rails/engine.ts";
import type { PayoutRail, RailAnswer, RailSubmission } from "../rails/seam.ts";
import { type ProviderReach, submitThroughReach } from "../rails/provider_reach.ts";
import { type IncreaseClient, IncreaseUnanswered, type IncreaseValidation } from "./client.ts";
import { pushAction, pushRecheckMs, pushRoutes, splitName, validationVerdict } from "./rules.ts";
import { insertInstantTransfer, INSTANT_JOBS } from "./store.ts";
import { type IncreaseAccount, increaseClientOf } from "./account.ts";

export interface InstantRailDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  readonly policy: RailPolicy;
  /** How long one call to Increase may take (INCREASE_TIMEOUT_MS unless a test shortens it). */
  readonly increaseTimeoutMs?: number;
  /** How long a submission waits for its validation's answer before asking again later. */
  readonly validationWaitMs?: number;
  /** The Increase each company is paid through (its own, else the environment's simulator). */
  readonly increase: ProviderReach<IncreaseAccount>;
}

/** A validation still pending is read again this often while the submission waits. */
const VALIDATION_POLL_MS = 250;
const VALIDATION_WAIT_MS = 10_000;

/** The validation's final answer, read again while pending, at most `waitMs`. */
async function settledValidation(
  increase: IncreaseClient,
  validation: IncreaseValidation,
  waitMs: number,
): Promise<IncreaseValidation | null> {
  const deadline = Date.now() + waitMs;
  let current = validation;
  while (validationVerdict(current).kind === "pending") {
    if (Date.now() >= deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, VALIDATION_POLL_MS));
    const read = await increase.validation(current.id);
    if (read.kind !== "ok") {
      throw new Error(`validation ${current.id}: ${read.status} ${read.detail}`);
    }
    current = read.value;
  }
  return current;
}

async function push(
  deps: InstantRailDeps,
  submission: RailSubmission,
  account: IncreaseAccount,
): Promise<RailAnswer> {
  const increase = increaseClientOf(deps.database, submission.companyId, account, {
    at: submission.submittedAt,
    timeoutMs: deps.increaseTimeoutMs,
  });
  if (submission.details.instant_to === "bank") return await payBank(deps, increase, submission);
  const { card_token_id: cardTokenId, cardholder_name: name, zip } = submission.details;
  if (!cardTokenId || !name || !zip) {
    throw new Error(
      `payout ${submission.payoutId} chose instant deposit without a card token, name and ZIP`,
    );
  }
  const refused = (reason: "card_not_eligible" | "card_declined", message: string): RailAnswer => ({
    kind: "refused",
    reason,
    message,
  });
  const capabilities = await increase.capabilities(cardTokenId);
  if (capabilities.kind !== "ok") {
    return refused("card_not_eligible", `Increase refused the card token: ${capabilities.detail}`);
  }
  const routes = pushRoutes(capabilities.value);
  if (routes.length === 0) {
    return refused("card_not_eligible", "no card network route takes a domestic push to this card");
  }
  const { first, last } = splitName(name);
  const created = await increase.createValidation(
    { cardTokenId, firstName: first, lastName: last, postalCode: zip },
    `${submission.reference}-validation`,
  );
  if (created.kind !== "ok") {
    return refused("card_declined", `Increase refused the validation: ${created.detail}`);
  }
  const validation = await settledValidation(
    increase,
    created.value,
    deps.validationWaitMs ?? VALIDATION_WAIT_MS,
  );
  if (validation === null) {
    throw new IncreaseUnanswered(`validation ${created.value.id} is still pending`);
  }
  const verdict = validationVerdict(validation);
  if (verdict.kind === "invalid") return refused("card_declined", verdict.why);
  const pushed = await increase.createPush(
    {
      cardTokenId,
      amount: decimalAmount(submission.amountCents, "a push amount"),
      recipientName: name,
    },
    submission.reference,
  );
  if (pushed.kind !== "ok") {
    return refused("card_declined", `Increase refused the push: ${pushed.detail}`);
  }
  const transfer = pushed.value;
  const action = pushAction(transfer.status);
  if (action.kind === "fail") {
    return refused(
      "card_declined",
      `the push was ${transfer.status}: ${transfer.decline?.reason ?? ""}`,
    );
  }
  return {
    kind: "accepted",
    railReference: transfer.id,
    outcome: action.kind === "complete" ? { kind: "complete", at: submission.submittedAt } : null,
    facts: {
      transfer_id: transfer.id,
      validation_id: validation.id,
      card_token_id: cardTokenId,
      route: transfer.route,
      status: transfer.status,
    },
  };
}

/**
 * An instant bank payment: the routing lookup must say the payee's bank takes Real-Time Payments
 * (else `bank_not_reachable`), then one transfer under the submission's reference as
 * Idempotency-Key to the account the payout keeps sealed.
 */
async function payBank(
  deps: InstantRailDeps,
  increase: IncreaseClient,
  submission: RailSubmission,
): Promise<RailAnswer> {
  const { routing_number: routing, account_holder: holder, account_sealed: sealed } =
    submission.details;
  if (!routing || !holder || !sealed) {
    throw new Error(
      `payout ${submission.payoutId} chose an instant bank payment without an account`,
    );
  }
  if (!await increase.rtpReachable(routing)) {
    return {
      kind: "refused",
      reason: "bank_not_reachable",
      message: `the bank of routing number ${routing} does not take Real-Time Payments transfers`,
    };
  }
  const sent = await increase.createRtp({
    amountCents: submission.amountCents,
    creditorName: holder,
    accountNumber: await deps.secretBox.openText(sealed),
    routingNumber: routing,
    remittance: `Payment ${submission.reference}`,
  }, submission.reference);
  if (sent.kind !== "ok") {
    return {
      kind: "refused",
      reason: "bank_not_reachable",
      message: `Increase refused the Real-Time Payments transfer: ${sent.detail}`,
    };
  }
  const transfer = sent.value;
  const action = pushAction(transfer.status, "rtp");
  if (action.kind === "fail") {
    return {
      kind: "refused",
      reason: "bank_not_reachable",
      message: `the transfer was ${transfer.status}: ${
        transfer.rejection?.reject_reason_code ?? ""
      }`,
    };
  }
  return {
    kind: "accepted",
    railReference: transfer.id,
    outcome: action.kind === "complete" ? { kind: "complete", at: submission.submittedAt } : null,
    facts: { transfer_id: transfer.id, route: "rtp", status: transfer.status },
  };
}

/** The instant deposit rail of one environment's database. */
export function instantRail(deps: InstantRailDeps): PayoutRail {
  return {
    shape: "per_payout",
    configured: (reader, companyId) => deps.increase.serves(reader, companyId),
    async submit(submission) {
      try {
        return await submitThroughReach(
          deps.increase,
          { name: "Increase", reader: deps.database.readClient },
          submission,
          (account) => push(deps, submission, account),
        );
      } catch (error) {
        if (!(error instanceof IncreaseUnanswered)) throw error;
        // Asked again under the same keys, Increase answers with what it already has.
        throw new TransientJobError(
          `Increase did not answer for ${submission.reference}: ${error.message}`,
          { cause: error },
        );
      }
    },
    async accepted(tx, submission, answer, now) {
      const facts = answer.facts!;
      await insertInstantTransfer(tx, {
        reference: submission.reference,
        payoutId: submission.payoutId,
        companyId: submission.companyId,
        cardTokenId: facts.card_token_id === undefined ? null : String(facts.card_token_id),
        validationId: facts.validation_id === undefined ? null : String(facts.validation_id),
        transferId: String(facts.transfer_id),
        route: String(facts.route),
        status: String(facts.status),
      }, now);
      await recordMethodDetail(tx, submission.payoutId, "network", String(facts.route));
      if (answer.outcome !== null) return;
      await scheduleJob(tx, {
        companyId: submission.companyId,
        kind: INSTANT_JOBS.check,
        subjectId: String(facts.transfer_id),
        dueAt: now + pushRecheckMs(1),
      }, now);
    },
  };
}
