/**
 * The rail seam: what a payout rail is given and what it answers. Rails are called by jobs only,
 * outside every write unit, and they answer later than they are asked: a payout is submitted by
 * its `payout.submit` job, and what happens to the money afterwards arrives as an event of the
 * rail (the sandbox's scheduled outcome, a return file, a provider callback) that moves the payout
 * through the state machine. Two shapes fit behind the seam: a rail called once per payout
 * (`PayoutRail`, here) and a rail that takes payouts in batches (`BatchRail`, lib/rails/batch.ts).
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { ModalityCode } from "../payouts/states.ts";
import type { BatchRail } from "./batch.ts";

/** How a sandbox payout will behave, fixed at selection from test details (contract §10). */
export type SandboxScenario =
  | "settles"
  | "returns_r03"
  | "transient_once"
  | "declined"
  | "undeliverable";

/** One submission of a payout to a rail. */
export interface RailSubmission {
  /**
   * The idempotency reference: the payout id and its submission number (`po_…-2`). A rail must
   * answer the same reference twice with one payment, whatever happened between the two calls.
   */
  readonly reference: string;
  readonly companyId: string;
  readonly payoutId: string;
  readonly modality: ModalityCode;
  readonly amountCents: number;
  /** 0 for the first attempt on the chosen method, then the number of automatic retries so far. */
  readonly attempt: number;
  /** When the payout was submitted, in the company's domain time (the sandbox clock in test). */
  readonly submittedAt: number;
  /** What the payout keeps of the payee's choice (non-secret fields, tokens): a card token, a name. */
  readonly details: Readonly<Record<string, string>>;
  /**
   * What the rail decided at the submission's first attempt (`PayoutRail.terms`), given back
   * unchanged to every attempt; empty (or absent) for a rail that decides nothing ahead.
   */
  readonly terms?: SubmissionTerms;
}

/**
 * What a provider's request must carry alike on every attempt of one submission (a card's expiry):
 * the same idempotency key with another body is refused, or answered with the first object.
 */
export type SubmissionTerms = Readonly<Record<string, string | number>>;

/** What a rail says will become of a payout it accepted; the sandbox knows at once. */
export type RailOutcome =
  | { readonly kind: "complete"; readonly at: number }
  | { readonly kind: "fail"; readonly at: number; readonly reason: string };

/** Why a rail refused a payout before sending it. */
export type RailRefusal =
  | "rail_not_configured"
  | "card_declined"
  /** The card issuer refused to issue a virtual card. */
  | "card_not_issued"
  /** No card network route takes a push to the payee's card. */
  | "card_not_eligible"
  /** The payee's bank cannot receive an instant bank payment (the provider's routing lookup). */
  | "bank_not_reachable"
  /** Live has no sanctions list loaded, so no payout may be screened and none is sent. */
  | "sanctions_list_missing";

/** A rail's answer to a submission. */
export type RailAnswer =
  | {
    readonly kind: "accepted";
    /** The rail's own name for the payment, shown to the company (`rail_reference`). */
    readonly railReference: string;
    /** Known only to rails that decide at once (the sandbox); others report outcomes later. */
    readonly outcome: RailOutcome | null;
    /** What the rail's `accepted` keeps of the payment (a card's token and expiry). */
    readonly facts?: Readonly<Record<string, string | number>>;
  }
  | { readonly kind: "refused"; readonly reason: RailRefusal; readonly message: string };

/** An accepted answer. */
export type RailAcceptance = Extract<RailAnswer, { kind: "accepted" }>;

/** A rail called once per payout. */
export interface PayoutRail {
  readonly shape: "per_payout";
  /**
   * Whether the company has the rail's provider configured (in the sandbox, its simulator);
   * absent, the rail pays every company. A payout of an unconfigured company is refused.
   */
  configured?(reader: SqlReader, companyId: string): Promise<boolean>;
  /**
   * In the claiming unit of a submission's first attempt, before the rail is first called: what
   * its request derives from time or settings (a card's expiry). It is kept with the submission's
   * job, so a retry after a crash, a month change or a settings change sends the same request.
   */
  terms?(reader: SqlReader, submission: RailSubmission): Promise<SubmissionTerms>;
  /** Submits a payout; idempotent on `submission.reference`. Throws when the rail could not be reached. */
  submit(submission: RailSubmission): Promise<RailAnswer>;
  /** In the unit that records an acceptance: what follows it (a card kept, its close planned). */
  accepted?(
    tx: WriteTx,
    submission: RailSubmission,
    answer: RailAcceptance,
    now: number,
  ): Promise<void>;
}

/** The rails of one environment: which rail takes a payout of each method. */
export interface RailDirectory {
  forModality(modality: ModalityCode): PayoutRail | BatchRail;
  /** The batch rail of that name. */
  batchRail(name: string): BatchRail | undefined;
  /** Every batch rail, for their jobs. */
  batchRails(): readonly BatchRail[];
}

/** The idempotency reference of a payout's `submission`-th submission. */
export function submissionReference(payoutId: string, submission: number): string {
  return `${payoutId}-${submission}`;
}

/**
 * A directory with batch rails for some methods, providers' per-payout rails for others (Lithic's
 * virtual cards), and `others` for any method neither names.
 */
export function railDirectory(
  others: PayoutRail,
  batchRails: Partial<Record<ModalityCode, BatchRail>> = {},
  providerRails: Partial<Record<ModalityCode, PayoutRail>> = {},
): RailDirectory {
  const byName = new Map(Object.values(batchRails).map((rail) => [rail.name, rail]));
  return {
    forModality: (modality) => batchRails[modality] ?? providerRails[modality] ?? others,
    batchRail: (name) => byName.get(name),
    batchRails: () => [...byName.values()],
  };
}
