/**
 * Documents a company uploads for its payees (contract §6), and the signed copies their links
 * serve (contract §9). Only a PDF that can be shown and signed is kept (pdfProblem); one-time use
 * is for custom documents only.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { parkDocumentCheck } from "./jobs.ts";
import {
  CUSTOM_DOCUMENT_TYPE,
  type DocumentRow,
  findDocument,
  insertDocument,
  type NewDocument,
  readDocumentContent,
  readSignedDocumentContent,
} from "../disbursements/api_store.ts";

export type { DocumentRow };
export { pdfProblem, UnstampableDocumentError } from "./certificate.ts";

/** Why a document of this type cannot be one-time, or null. */
export function oneTimeUseProblem(docTypeId: number, oneTimeUse: boolean): string | null {
  return oneTimeUse && docTypeId !== CUSTOM_DOCUMENT_TYPE
    ? `one_time_use applies to custom documents (doc_type_id ${CUSTOM_DOCUMENT_TYPE}) only`
    : null;
}

/** Stores an uploaded document; a company's document names are unique. */
export async function uploadDocument(
  tx: WriteTx,
  database: Database,
  document: NewDocument,
  realNow: number,
): Promise<Result<{ documentId: string }, "duplicate_document_name">> {
  const now = await domainNow(database, document.companyId, realNow);
  const id = await insertDocument(tx, document, now);
  if (!id) {
    return tx.abort(refuse(
      "duplicate_document_name",
      `the company already has a document named ${JSON.stringify(document.name)}`,
      { field: "name" },
    ));
  }
  return ok({ documentId: id });
}

/**
 * A signer met a stored document that cannot be stamped: an error log line for whoever watches
 * the logs, and the document's parked check (parkDocumentCheck) for `jobs:list --parked`.
 */
export async function reportUnstampableDocument(
  database: Database,
  report: { companyId: string; documentId: string; payoutId: string; error: Error },
  now: number,
): Promise<void> {
  const error =
    `${report.error.message}; payees cannot sign document ${report.documentId} until it is restored (then jobs:retry this check)`;
  console.error(JSON.stringify({
    level: "error",
    msg: "a stored document cannot be stamped: signing it is refused",
    environment: database.environment,
    company_id: report.companyId,
    document_id: report.documentId,
    payout_id: report.payoutId,
    error: report.error.message,
  }));
  await database.writer.write((tx) =>
    parkDocumentCheck(
      tx,
      { companyId: report.companyId, documentId: report.documentId, error },
      now,
    )
  );
}

/** A company's document without its content, or null (another company's is null too). */
export function findCompanyDocument(
  database: Database,
  companyId: string,
  documentId: string,
): Promise<DocumentRow | null> {
  return findDocument(database.readClient, companyId, documentId);
}

/** A company's document content, or null. */
export function companyDocumentContent(
  database: Database,
  companyId: string,
  documentId: string,
): Promise<Uint8Array | null> {
  return readDocumentContent(database.readClient, companyId, documentId);
}

/** A signed copy's PDF, for a link already verified as issued by this service. */
export function signedDocumentContent(
  database: Database,
  signedDocumentId: string,
): Promise<{ name: string; content: Uint8Array } | null> {
  return readSignedDocumentContent(database.readClient, signedDocumentId);
}
