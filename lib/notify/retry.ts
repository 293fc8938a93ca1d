/**
 * An operator's retry of a failed live notification (issue 20): the message goes back to pending,
 * due now, with a fresh attempt schedule, and the outbox sender sends it as any other. Its last
 * error stays on the row until the next attempt's outcome replaces it. Runs in the caller's unit.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { ok, refuse, type Result } from "../platform/result.ts";

export type NotificationRetryRefusal = "notification_not_found" | "notification_not_failed";

/** Puts one failed notification back in the outbox. */
export async function retryFailedNotification(
  tx: WriteTx,
  notificationId: string,
): Promise<Result<{ id: string; status: "pending" }, NotificationRetryRefusal>> {
  const { rows } = await tx.execute({
    sql: "SELECT status FROM notifications WHERE id = ?",
    args: [notificationId],
  });
  if (!rows[0]) {
    return tx.abort(
      refuse("notification_not_found", `no notification ${notificationId}`, {
        field: "notification",
      }),
    );
  }
  if (rows[0].status !== "failed") {
    return tx.abort(
      refuse(
        "notification_not_failed",
        `notification ${notificationId} is ${
          rows[0].status
        }, not failed: only a failed one is retried`,
        { field: "notification" },
      ),
    );
  }
  await tx.execute({
    sql: `UPDATE notifications SET status = 'pending', attempt_count = 0, next_attempt_at = NULL
          WHERE id = ? AND status = 'failed'`,
    args: [notificationId],
  });
  return ok({ id: notificationId, status: "pending" });
}

/** The company a notification is about (null: a message about no company), or null if absent. */
export async function notificationCompany(
  reader: SqlReader,
  notificationId: string,
): Promise<{ companyId: string | null } | null> {
  const { rows } = await reader.execute({
    sql: "SELECT company_id FROM notifications WHERE id = ?",
    args: [notificationId],
  });
  if (!rows[0]) return null;
  return { companyId: rows[0].company_id === null ? null : String(rows[0].company_id) };
}
