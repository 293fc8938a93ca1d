/**
 * Sanctions screening of payouts before they are submitted, on any rail: each payee and
 * authorization-party name against the loaded OFAC SDN list (the bundled fixture in test). A
 * potential match holds the payout `in_review` until an operator clears or rejects it. The
 * match itself is lib/sanctions/rules.ts.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import { newId } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { applyMove, loadPayout, type MoveRefusal, type PayoutRow } from "../payouts/store.ts";
import { requestSubmission } from "../payouts/jobs.ts";
import { FIXTURE_LIST_ID, fixtureSanctionsEntries } from "./fixture.ts";
import {
  type NameMatch,
  parseSdnList,
  sanctionsEntries,
  SanctionsIndex,
  type SdnRow,
} from "./rules.ts";
import {
  clearedReviews,
  decideReview,
  findReview,
  insertList,
  insertReview,
  listInForce,
  readListEntries,
  type SanctionsListRow,
  type SanctionsReview,
} from "./store.ts";

/** Indexes kept in memory: the list in force and the one before it, while a load settles. */
const INDEXES_CACHED_MAX = 2;
const indexes = new Map<string, SanctionsIndex>();

function remember(listId: string, index: SanctionsIndex): SanctionsIndex {
  indexes.delete(listId);
  indexes.set(listId, index);
  while (indexes.size > INDEXES_CACHED_MAX) indexes.delete(indexes.keys().next().value!);
  return index;
}

/** The index of a list, built once per list id (a list's entries never change). */
async function indexOf(reader: SqlReader, listId: string): Promise<SanctionsIndex> {
  const cached = indexes.get(listId);
  if (cached) return cached;
  if (listId === FIXTURE_LIST_ID) {
    return remember(listId, new SanctionsIndex(fixtureSanctionsEntries));
  }
  return remember(listId, new SanctionsIndex(await readListEntries(reader, listId)));
}

/** The list a screening in `environment` uses: the fixture in test, the list in force in live. */
async function screeningList(
  reader: SqlReader,
  environment: Environment,
): Promise<{ id: string; description: string } | null> {
  if (environment === "test") {
    return { id: FIXTURE_LIST_ID, description: "the sandbox fixture list" };
  }
  const list = await listInForce(reader);
  if (list === null) return null;
  return {
    id: list.id,
    description: `OFAC list ${list.id} (${list.fileName}, sha256 ${list.sha256.slice(0, 12)}…)`,
  };
}

/** Whether a sanctions list is in force in `environment` (always in test: the fixture). */
export async function sanctionsListLoaded(
  reader: SqlReader,
  environment: Environment,
): Promise<boolean> {
  return (await screeningList(reader, environment)) !== null;
}

/**
 * The names screened for a payout: its payee's (first and last name, the registered /v1 payee's
 * name) and those of the authorization parties whose endorsement it needs.
 */
export async function screenedNames(reader: SqlReader, payoutId: string): Promise<string[]> {
  const { rows } = await reader.execute({
    sql: `SELECT trim(coalesce(p.first_name, '') || ' ' || coalesce(p.last_name, '')) AS name
            FROM payouts p WHERE p.id = ?1
          UNION ALL
          SELECT y.name FROM payouts p JOIN payees y ON y.id = p.payee_id WHERE p.id = ?1
          UNION ALL
          SELECT trim(coalesce(a.first_name, '') || ' ' || coalesce(a.last_name, ''))
            FROM endorsements e JOIN payouts p ON p.id = e.payout_id
            JOIN authorization_parties a
              ON a.disbursement_id = p.disbursement_id AND a.party_uuid = e.party_uuid
           WHERE e.payout_id = ?1
          UNION ALL
          SELECT a.company_name
            FROM endorsements e JOIN payouts p ON p.id = e.payout_id
            JOIN authorization_parties a
              ON a.disbursement_id = p.disbursement_id AND a.party_uuid = e.party_uuid
           WHERE e.payout_id = ?1`,
    args: [payoutId],
  });
  const names = rows.map((row) => (row.name === null ? "" : String(row.name).trim()));
  return [...new Set(names.filter((name) => name !== ""))];
}

const matchKey = (match: Pick<NameMatch, "screenedName" | "entryNumber">) =>
  `${match.screenedName}\u0000${match.entryNumber}`;

/**
 * Screens a payout about to be submitted, inside the submit job's claiming unit: `clear` lets
 * the submission go on; `held` means the payout moved to `in_review` with an open review (the
 * caller submits nothing); `no_list` means live has no list loaded (the caller refuses the
 * submission with `sanctions_list_missing`). Matches an operator already cleared for this payout
 * and list (the same names against the same entries) pass, so a cleared payout is not held again.
 */
export async function screenBeforeSubmission(
  tx: WriteTx,
  environment: Environment,
  payout: PayoutRow,
  now: number,
): Promise<"clear" | "held" | "no_list"> {
  const list = await screeningList(tx, environment);
  if (list === null) return "no_list";
  const index = await indexOf(tx, list.id);
  const matches = index.screen(await screenedNames(tx, payout.id));
  if (matches.length === 0) return "clear";
  const cleared = new Set(
    (await clearedReviews(tx, payout.id, list.id)).flatMap((review) =>
      review.matches.map(matchKey)
    ),
  );
  if (matches.every((match) => cleared.has(matchKey(match)))) return "clear";
  const held = await applyMove(tx, payout.id, { kind: "hold_for_review" }, now, {
    detail: `sanctions screening: potential match on ${list.description}: ${
      [...new Set(matches.map((m) => m.listName))].join("; ")
    }`,
  });
  if (!held.ok) {
    throw new Error(`hold_for_review of ${payout.id} refused: ${held.message}`);
  }
  await insertReview(tx, {
    id: newId("scr"),
    companyId: payout.companyId,
    payoutId: payout.id,
    matches,
    listId: list.id,
    createdAt: now,
  });
  return "held";
}

export type ReviewRefusal = MoveRefusal | "review_not_found" | "review_not_open";

/** What deciding a review did: the review and the payout after it. */
export interface ReviewDecision {
  readonly review: SanctionsReview;
  readonly payout: PayoutRow;
}

async function openReview(
  tx: WriteTx,
  reviewId: string,
): Promise<Result<SanctionsReview, "review_not_found" | "review_not_open">> {
  const review = await findReview(tx, reviewId);
  if (!review) {
    return refuse("review_not_found", `no sanctions review ${reviewId}`, { field: "review" });
  }
  if (review.status !== "open") {
    return refuse(
      "review_not_open",
      `sanctions review ${reviewId} is ${review.status}, not open`,
      { field: "review", details: { status: review.status } },
    );
  }
  return ok(review);
}

/**
 * An operator cleared a held payout (the match is not the payee), in the caller's unit: the
 * review is closed as cleared, the payout goes back to modality_selected and its submission is
 * scheduled again; its next screening lets the cleared names through.
 */
export async function clearReview(
  tx: WriteTx,
  reviewId: string,
  decision: { operatorId: string | null; reason: string },
  now: number,
): Promise<Result<ReviewDecision, ReviewRefusal>> {
  const moved = await closeReview(tx, reviewId, "cleared", decision, now);
  if (!moved.ok) return moved;
  await requestSubmission(tx, moved.value, now);
  return ok({
    review: (await findReview(tx, reviewId))!,
    payout: (await loadPayout(tx, moved.value.id))!,
  });
}

/**
 * An operator rejected a held payout (the match stands), in the caller's unit: the review is
 * closed as rejected and the payout fails with `sanctions_review`, never retried nor offered
 * again; its money stays held until the company cancels it.
 */
export async function rejectReview(
  tx: WriteTx,
  reviewId: string,
  decision: { operatorId: string | null; reason: string },
  now: number,
): Promise<Result<ReviewDecision, ReviewRefusal>> {
  const moved = await closeReview(tx, reviewId, "rejected", decision, now);
  if (!moved.ok) return moved;
  return ok({ review: (await findReview(tx, reviewId))!, payout: moved.value });
}

/** Closes an open review with the operator's decision and moves its payout accordingly. */
async function closeReview(
  tx: WriteTx,
  reviewId: string,
  status: "cleared" | "rejected",
  decision: { operatorId: string | null; reason: string },
  now: number,
) {
  const review = await openReview(tx, reviewId);
  if (!review.ok) return review;
  await decideReview(tx, reviewId, {
    status,
    decidedBy: decision.operatorId,
    reason: decision.reason,
  }, now);
  return await applyMove(
    tx,
    review.value.payoutId,
    { kind: status === "cleared" ? "clear_review" : "reject_review" },
    now,
    { detail: `sanctions review ${reviewId} ${status}: ${decision.reason}` },
  );
}

/** A list read from the files an operator gave, ready to load. */
export interface SanctionsListUpload {
  readonly sdnCsv: string;
  readonly altCsv: string | null;
  readonly sha256: string;
  readonly fileName: string;
}

/** What a load put in force. */
export interface LoadedSanctionsList extends SanctionsListRow {
  readonly replaced: string[];
}

/** Parses a list as OFAC publishes it; a refusal names the file and line. */
export function parseSanctionsUpload(
  upload: Pick<SanctionsListUpload, "sdnCsv" | "altCsv">,
): Result<SdnRow[], "invalid_input"> {
  return parseSdnList(upload.sdnCsv, upload.altCsv);
}

/**
 * Puts a parsed list in force in the caller's unit (the live database): the one before is
 * replaced, and its index is built at once for this process's screenings.
 */
export async function loadSanctionsList(
  tx: WriteTx,
  upload: SanctionsListUpload,
  rows: readonly SdnRow[],
  loadedBy: string | null,
  now: number,
): Promise<LoadedSanctionsList> {
  const entries = sanctionsEntries(rows);
  const list: SanctionsListRow = {
    id: newId("sdn"),
    sha256: upload.sha256,
    entryCount: entries.length,
    fileName: upload.fileName,
    loadedBy,
    loadedAt: now,
  };
  const { replaced } = await insertList(tx, list, entries);
  remember(list.id, new SanctionsIndex(entries));
  return { ...list, replaced };
}
