/**
 * Documents a company uploads for its payees (DESIGN 6), and the signed copies their links
 * serve (DESIGN 9). Only a real PDF is kept; one-time use is for custom documents only.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";
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

/** "%PDF-": the first bytes of every PDF. */
const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d];

/** Why a document of this type cannot be one-time, or null. */
export function oneTimeUseProblem(docTypeId: number, oneTimeUse: boolean): string | null {
  return oneTimeUse && docTypeId !== CUSTOM_DOCUMENT_TYPE
    ? `one_time_use applies to custom documents (doc_type_id ${CUSTOM_DOCUMENT_TYPE}) only`
    : null;
}

/** Why these bytes are not kept as a PDF, or null. */
export function pdfProblem(content: Uint8Array): string | null {
  return PDF_MAGIC.every((byte, i) => content[i] === byte)
    ? null
    : "pdf_base64 is not a PDF (it must start with %PDF-)";
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
