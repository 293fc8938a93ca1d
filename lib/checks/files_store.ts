/**
 * The check files at rest: one check_files row per positive-pay or print file, immutable once
 * built, its content sealed (it names the account) and its SHA-256 of the plain bytes. Each is
 * the content of a rail_batches row (`check_positive_pay`, `check_print`), whose status is the
 * file's: built → transmitting → transmitted | in_doubt | voided.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { columnsOf, rowMapper } from "../../db/rows.ts";
import { checkFiles } from "../../db/schema.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { openAsBuilt } from "../rails/kept_file.ts";
import type { RailBatchStatus } from "../rails/batch.ts";

export type CheckFileRow = typeof checkFiles.$inferSelect;
export type CheckFileKind = CheckFileRow["kind"];

/** A check file with its batch's status and transmission. */
export interface CheckFile extends CheckFileRow {
  readonly status: RailBatchStatus;
  readonly transmittedAt: number | null;
  readonly railReference: string | null;
  readonly error: string | null;
}

const file = columnsOf(checkFiles);
const toCheckFileRow = rowMapper({
  batchId: file.batchId,
  companyId: file.companyId,
  kind: file.kind,
  positivePayFileId: file.positivePayFileId,
  contentSealed: file.contentSealed,
  sha256: file.sha256,
  byteSize: file.byteSize,
  fileName: file.fileName,
  issueCount: file.issueCount,
  voidCount: file.voidCount,
  totalCents: file.totalCents,
  createdAt: file.createdAt,
});

const SELECT = `SELECT ${toCheckFileRow.columns.map((c) => `f.${c}`).join(", ")},
    b.status AS batch_status, b.transmitted_at AS batch_transmitted_at,
    b.rail_reference AS batch_rail_reference, b.error AS batch_error
  FROM check_files f JOIN rail_batches b ON b.id = f.batch_id`;

function toCheckFile(row: Readonly<Record<string, unknown>>): CheckFile {
  return {
    ...toCheckFileRow(row),
    status: String(row.batch_status) as RailBatchStatus,
    transmittedAt: row.batch_transmitted_at === null ? null : Number(row.batch_transmitted_at),
    railReference: row.batch_rail_reference === null ? null : String(row.batch_rail_reference),
    error: row.batch_error === null ? null : String(row.batch_error),
  };
}

/** Keeps a built check file; immutable from here on. */
export async function insertCheckFile(tx: WriteTx, row: CheckFileRow): Promise<void> {
  await tx.db.insert(checkFiles).values(row);
}

/** A check file and its batch's status, or null. */
export async function loadCheckFile(reader: SqlReader, fileId: string): Promise<CheckFile | null> {
  const { rows } = await reader.execute({ sql: `${SELECT} WHERE f.batch_id = ?`, args: [fileId] });
  return rows[0] ? toCheckFile(rows[0]) : null;
}

/** The print file built with a positive-pay file, or null (no postal check in it). */
export async function printFileOf(
  reader: SqlReader,
  positivePayFileId: string,
): Promise<CheckFile | null> {
  const { rows } = await reader.execute({
    sql: `${SELECT} WHERE f.positive_pay_file_id = ? AND f.kind = 'print'`,
    args: [positivePayFileId],
  });
  return rows[0] ? toCheckFile(rows[0]) : null;
}

/** A file's bytes sealed for check_files. */
export function sealCheckFile(secretBox: SecretBox, content: Uint8Array): Promise<string> {
  return secretBox.seal(content);
}

/** The plain bytes of check_files.content_sealed. */
export function openCheckFile(secretBox: SecretBox, sealed: string): Promise<Uint8Array> {
  return secretBox.open(sealed);
}

/** A check file's plain bytes, only when they are the file as built (lib/rails/kept_file.ts). */
export function openCheckFileAsBuilt(
  secretBox: SecretBox,
  file: Pick<CheckFileRow, "batchId" | "sha256" | "contentSealed">,
): Promise<Uint8Array> {
  return openAsBuilt(
    `check file ${file.batchId}`,
    () => openCheckFile(secretBox, file.contentSealed),
    file.sha256,
  );
}
