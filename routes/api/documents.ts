/**
 * Surface A documents (seed 2.7, contract §6): upload a PDF, read its record and its content. Only
 * a PDF that can be shown and signed is kept (`%PDF-` at byte 0, readable by pdf-lib, not
 * encrypted, at least one page), names are unique per company, and another company's document is a
 * 404.
 */
import { Hono } from "hono";
import {
  companyDocumentContent,
  findCompanyDocument,
  oneTimeUseProblem,
  pdfProblem,
  uploadDocument,
} from "../../lib/documents/service.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { companyTarget } from "./request.ts";
import { apiSchemas } from "./schemas.ts";
import { errorResponse, refusalError } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { invalidInput, parseJsonBody } from "../validation.ts";
import { seedTimestamp } from "./format.ts";

/** doc_type_id categories of contract §6. */
export const documentTypes: Readonly<Record<number, string>> = {
  1: "After Payee Authentication",
  2: "ACH Authorization",
  3: "Authorization Party Approval",
  4: "Custom",
};

const documentNotFound = (id: string) => ({
  status: 404 as const,
  code: "not_found",
  message: `no document ${JSON.stringify(id)} for this company`,
});

export function apiDocumentRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { limits } = deps.config;
  const { uploadDocument: uploadBody } = apiSchemas(deps.config);

  app.post("/", async (c) => {
    const principal = c.get("apiPrincipal");
    const body = await parseJsonBody(c, uploadBody);
    if (!body.ok) return body.response;
    const input = body.value;
    const oneTime = oneTimeUseProblem(input.doc_type_id, input.one_time_use);
    if (oneTime) return invalidInput(c, "one_time_use", "body", oneTime);
    let content: Uint8Array;
    try {
      content = Uint8Array.fromBase64(input.pdf_base64);
    } catch {
      return invalidInput(c, "pdf_base64", "body", "pdf_base64 is not valid base64");
    }
    if (content.byteLength > limits.DOCUMENT_SIZE_MAX_BYTES) {
      const message =
        `the document is ${content.byteLength} bytes; at most ${limits.DOCUMENT_SIZE_MAX_BYTES} are accepted`;
      return errorResponse(c, {
        status: 413,
        code: "payload_too_large",
        message,
        issues: [{ field: "pdf_base64", location: "body", message }],
      });
    }
    // Parsed whole before the write unit: PDF work is CPU, and the writer is shared.
    const notPdf = await pdfProblem(content);
    if (notPdf) return invalidInput(c, "pdf_base64", "body", notPdf);
    const document = {
      companyId: principal.companyId,
      name: input.name,
      docTypeId: input.doc_type_id,
      isSignRequired: input.is_sign_required,
      oneTimeUse: input.one_time_use,
      content,
    };
    return await respondIdempotently(
      c,
      deps,
      companyTarget(c),
      (tx) => uploadDocument(tx, principal.database, document, deps.clock.now()),
      (uploaded) =>
        uploaded.ok
          ? { status: 201, body: { document_uuid: uploaded.value.documentId } }
          : refusalOutcome(
            c,
            refusalError(uploaded, { issue: "already used by another document" }),
          ),
    );
  });

  app.get("/:document_uuid", async (c) => {
    const principal = c.get("apiPrincipal");
    const document = await findCompanyDocument(
      principal.database,
      principal.companyId,
      c.req.param("document_uuid"),
    );
    if (!document) return errorResponse(c, documentNotFound(c.req.param("document_uuid")));
    return c.json({
      document_uuid: document.id,
      name: document.name,
      doc_type_id: document.docTypeId,
      doc_type: documentTypes[document.docTypeId],
      is_sign_required: document.isSignRequired,
      one_time_use: document.oneTimeUse,
      size_bytes: document.sizeBytes,
      sha256: document.sha256,
      created_at: seedTimestamp(document.createdAt),
    });
  });

  app.get("/:document_uuid/content", async (c) => {
    const principal = c.get("apiPrincipal");
    const content = await companyDocumentContent(
      principal.database,
      principal.companyId,
      c.req.param("document_uuid"),
    );
    if (!content) return errorResponse(c, documentNotFound(c.req.param("document_uuid")));
    c.header("Content-Type", "application/pdf");
    c.header("Cache-Control", "private, no-store");
    return c.body(content as Uint8Array<ArrayBuffer>);
  });
  return app;
}
