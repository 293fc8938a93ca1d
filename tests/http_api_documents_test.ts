import assert from "node:assert/strict";
import { PDFDocument } from "pdf-lib";
import { sha256Hex } from "../lib/platform/keys.ts";
import { api, asBeacon } from "./api_helpers.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { pdfOfObjects } from "./pdf_helpers.ts";

const MIB = 1024 * 1024;
const onePage = await (async () => {
  const pdf = await PDFDocument.create();
  pdf.addPage([612, 792]);
  return await pdf.save();
})();
/** A one-page PDF padded with trailing spaces to `size` bytes (after %%EOF, as readers allow). */
const pdfOf = (size: number) => {
  const bytes = new Uint8Array(size).fill(0x20);
  bytes.set(onePage);
  return bytes;
};
const text = (source: string) => new TextEncoder().encode(source);
const upload = (name: string, pdf: Uint8Array, extra: Record<string, unknown> = {}) => ({
  doc_type_id: 4,
  name,
  is_sign_required: false,
  one_time_use: true,
  pdf_base64: pdf.toBase64(),
  ...extra,
});

Deno.test("upload a PDF: 201 document_uuid, its record and its bytes; another company sees 404", async () => {
  await withHttpFixture(async (f) => {
    const pdf = pdfOf(2048);
    const res = await api(f, "POST", "/api/documents", upload("Vendor contract", pdf));
    assert.equal(res.status, 201);
    const { document_uuid, ...rest } = await res.json() as { document_uuid: string };
    assert.match(document_uuid, /^doc_/);
    assert.deepEqual(rest, {});
    const record = await api(f, "GET", `/api/documents/${document_uuid}`);
    assert.deepEqual(await record.json(), {
      document_uuid,
      name: "Vendor contract",
      doc_type_id: 4,
      doc_type: "Custom",
      is_sign_required: false,
      one_time_use: true,
      size_bytes: 2048,
      sha256: await sha256Hex(pdf),
      created_at: "2026-01-05 15:00:00",
    });
    const content = await api(f, "GET", `/api/documents/${document_uuid}/content`);
    assert.equal(content.headers.get("Content-Type"), "application/pdf");
    assert.deepEqual(new Uint8Array(await content.arrayBuffer()), pdf);
    for (
      const path of [`/api/documents/${document_uuid}`, `/api/documents/${document_uuid}/content`]
    ) {
      const foreign = await api(f, "GET", path, undefined, asBeacon(f));
      assert.equal(foreign.status, 404, path);
      assert.equal((await foreign.json() as { name: string }).name, "RESOURCE_NOT_FOUND");
    }
    // Names are unique per company: Beacon may use the same one.
    const beacon = await api(
      f,
      "POST",
      "/api/documents",
      upload("Vendor contract", pdf),
      asBeacon(f),
    );
    assert.equal(beacon.status, 201);
  });
});

Deno.test("upload refusals name the field: type, name, base64, not a PDF, one_time_use, duplicate", async () => {
  await withHttpFixture(async (f) => {
    const pdf = pdfOf(1024);
    assert.equal((await api(f, "POST", "/api/documents", upload("Taken", pdf))).status, 201);
    const cases: [Record<string, unknown>, number, string, string][] = [
      [upload("a", pdf, { doc_type_id: 0 }), 400, "doc_type_id", "doc_type_id must be at least 1"],
      [upload("a", pdf, { doc_type_id: 5 }), 400, "doc_type_id", "doc_type_id must be at most 4"],
      [
        upload("a", pdf, { doc_type_id: 1.5 }),
        400,
        "doc_type_id",
        "doc_type_id must be a whole number",
      ],
      [upload("  ", pdf), 400, "name", "name must not be empty"],
      [upload("x".repeat(256), pdf), 400, "name", "name is at most 255 characters"],
      [
        upload("a", pdf, { pdf_base64: "%%%not base64" }),
        400,
        "pdf_base64",
        "pdf_base64 is not valid base64",
      ],
      [
        upload("a", new TextEncoder().encode("GIF89a, not a PDF")),
        400,
        "pdf_base64",
        "pdf_base64 is not a PDF (it must start with %PDF-)",
      ],
      [
        upload("a", new TextEncoder().encode(" %PDF-1.4 magic not at byte 0")),
        400,
        "pdf_base64",
        "pdf_base64 is not a PDF (it must start with %PDF-)",
      ],
      [
        upload("a", text("%PDF-")),
        400,
        "pdf_base64",
        "pdf_base64 cannot be read as a PDF (its structure is damaged)",
      ],
      [
        upload("a", text("%PDF-1.7\nsigned copy\n%%EOF")),
        400,
        "pdf_base64",
        "pdf_base64 is a PDF without a readable page tree: it has no page to show or sign",
      ],
      [
        upload("a", pdfOfObjects(["<< /Type /Catalog >>"])),
        400,
        "pdf_base64",
        "pdf_base64 is a PDF without a readable page tree: it has no page to show or sign",
      ],
      [
        upload(
          "a",
          pdfOfObjects([
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [] /Count 0 >>",
          ]),
        ),
        400,
        "pdf_base64",
        "pdf_base64 is a PDF with no page to show or sign",
      ],
      [
        upload(
          "a",
          pdfOfObjects([
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
            "<< /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >>",
          ], " /Encrypt 4 0 R /ID [<01> <01>]"),
        ),
        400,
        "pdf_base64",
        "pdf_base64 is an encrypted PDF: upload it without a password or encryption",
      ],
      [
        upload("a", pdf, { doc_type_id: 1 }),
        400,
        "one_time_use",
        "one_time_use applies to custom documents (doc_type_id 4) only",
      ],
      [upload("a", pdf, { pdf_base64: undefined }), 400, "pdf_base64", "pdf_base64 is required"],
      [upload("Taken", pdf), 409, "name", "already used by another document"],
    ];
    for (const [body, status, field, issue] of cases) {
      const res = await api(f, "POST", "/api/documents", body);
      assert.equal(res.status, status, issue);
      const record = await res.json() as { details: unknown[] };
      assert.deepEqual(record.details[0], { Issue: issue, Field: field, Location: "body" }, issue);
    }
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM documents",
    );
    assert.equal(Number(rows[0].n), 1, "no refused upload stored anything");
  });
});

Deno.test("size: 10 MiB decoded is accepted, one byte more is 413, a body over 14 MiB is 413", async () => {
  await withHttpFixture(async (f) => {
    const atLimit = await api(f, "POST", "/api/documents", upload("big", pdfOf(10 * MIB)));
    assert.equal(atLimit.status, 201);
    const over = await api(f, "POST", "/api/documents", upload("bigger", pdfOf(10 * MIB + 1)));
    assert.equal(over.status, 413);
    assert.deepEqual(await over.json(), {
      name: "PAYLOAD_TOO_LARGE",
      message: "the document is 10485761 bytes; at most 10485760 are accepted",
      details: [{
        Issue: "the document is 10485761 bytes; at most 10485760 are accepted",
        Field: "pdf_base64",
        Location: "body",
      }],
    });
    const body = await api(f, "POST", "/api/documents", upload("huge", pdfOf(11 * MIB)));
    assert.equal(body.status, 413);
    assert.equal((await body.json() as { name: string }).name, "PAYLOAD_TOO_LARGE");
  });
});

Deno.test("upload with an Idempotency-Key stores one document and replays its uuid", async () => {
  await withHttpFixture(async (f) => {
    const body = upload("Once", pdfOf(1024));
    const headers = { "Idempotency-Key": "upload-1" };
    const first = await api(f, "POST", "/api/documents", body, undefined, headers);
    const again = await api(f, "POST", "/api/documents", body, undefined, headers);
    assert.deepEqual([first.status, again.status], [201, 201]);
    assert.equal(again.headers.get("Idempotent-Replayed"), "true");
    assert.deepEqual(await again.json(), await first.json());
    const other = await api(
      f,
      "POST",
      "/api/documents",
      upload("Other", pdfOf(1024)),
      undefined,
      headers,
    );
    assert.equal(other.status, 422, "the same key with another body");
  });
});
