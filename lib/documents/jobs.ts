/**
 * The operator's record of a stored document that cannot be stamped (contract §9): signing it is
 * refused, and one `document.check` job per document is parked with the reason, so
 * `jobs:list --parked` shows it beside other stuck work. `jobs:retry` runs the check again: once
 * the document is restored it stamps, and the record clears; still damaged, it parks again.
 */
import { externalJob, type JobHandler } from "../../db/scheduler.ts";
import { findOpenJob, parkJob, scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import { findDocument, readDocumentContent } from "../disbursements/api_store.ts";
import { type SignatureRecord, stampCertificate } from "./certificate.ts";

export const DOCUMENT_CHECK_JOB = "document.check";

/** A check's claim: stamping a document of at most 10 MiB takes well under a second. */
export const DOCUMENT_CHECK_LEASE_MS = 60_000;

/** What a check stamps: the page a signature would append, for no one. */
const CHECK_RECORD: Omit<SignatureRecord, "documentName"> = {
  signer: "document check",
  role: "operator check",
  signedAt: 0,
  ip: null,
  userAgent: null,
  originalSha256: "",
};

/**
 * Parks the document's check with `error`, unless one is already pending or parked: one record
 * per damaged document, however many signers meet it.
 */
export async function parkDocumentCheck(
  tx: WriteTx,
  check: { companyId: string; documentId: string; error: string },
  now: number,
): Promise<void> {
  const job = { companyId: check.companyId, kind: DOCUMENT_CHECK_JOB, subjectId: check.documentId };
  if (await findOpenJob(tx, job)) return;
  const id = await scheduleJob(tx, { ...job, dueAt: now }, now);
  await parkJob(tx, id, { error: check.error, doneAt: now, run: { leaseUntil: null } });
}

/** The handler of `document.check`: stamps the stored document outside every write unit. */
export function documentJobHandlers(): Readonly<Record<typeof DOCUMENT_CHECK_JOB, JobHandler>> {
  return {
    [DOCUMENT_CHECK_JOB]: externalJob<{ name: string; content: Uint8Array }, void>({
      leaseMs: DOCUMENT_CHECK_LEASE_MS,
      async prepare(tx, job) {
        const document = await findDocument(tx, job.companyId, job.subjectId);
        const content = await readDocumentContent(tx, job.companyId, job.subjectId);
        // A document that no longer exists has nothing to check.
        return document && content ? { name: document.name, content } : null;
      },
      // An UnstampableDocumentError is not transient: the check parks again with its reason.
      async call({ name, content }) {
        await stampCertificate(content, { ...CHECK_RECORD, documentName: name });
      },
      record: () => Promise.resolve(),
    }),
  };
}
