/**
 * The sandbox rail's own record of what it received (sandbox_rail_submissions), keyed by the
 * submission's reference. It is the bank's side of the seam, so it commits in its own write unit,
 * never in one of the job that called it: an answer given is kept even if the caller crashes
 * before recording it.
 */
import type { Database } from "../../db/client.ts";
import type { RailAnswer, RailSubmission } from "./seam.ts";

/** The answer to the first submission of this reference, decided by `answer` when it is new. */
export function answerOnce(
  database: Database,
  submission: RailSubmission,
  answer: (submission: RailSubmission) => RailAnswer,
): Promise<RailAnswer> {
  return database.writer.write(async (tx) => {
    const { rows } = await tx.execute({
      sql: "SELECT answer FROM sandbox_rail_submissions WHERE reference = ?",
      args: [submission.reference],
    });
    if (rows[0]) return JSON.parse(rows[0].answer as string) as RailAnswer;
    const given = answer(submission);
    await tx.execute({
      sql:
        `INSERT INTO sandbox_rail_submissions (reference, company_id, payout_id, modality, answer, created_at)
            VALUES (?, ?, ?, ?, ?, ?)`,
      args: [
        submission.reference,
        submission.companyId,
        submission.payoutId,
        submission.modality,
        JSON.stringify(given),
        submission.submittedAt,
      ],
    });
    return given;
  });
}
