/**
 * E-signature certificates (contract §9): signing appends a page to the original PDF naming the
 * signer, the time, the IP address, the user agent and the SHA-256 of the original, so the signed
 * copy proves what was signed and by whom. A document is kept only when pdf-lib opens it without
 * a password and finds a page, the same parse signing needs; one that still cannot be stamped
 * later (damaged in storage) is refused by name, never signed blind.
 */
import type { PDFDocument } from "pdf-lib";

/** pdf-lib is loaded at the first upload or signature, not at every start of the service. */
const loadPdfLib = () => import("pdf-lib");

export interface SignatureRecord {
  readonly documentName: string;
  /** The name the signer typed. */
  readonly signer: string;
  /** What the signer is to the payment: payee, or an authorization party. */
  readonly role: string;
  readonly signedAt: number;
  readonly ip: string | null;
  readonly userAgent: string | null;
  readonly originalSha256: string;
}

const PAGE_WIDTH = 612;
const PAGE_HEIGHT = 792;
const MARGIN = 56;
const LINE_CHARS_MAX = 80;

/** "%PDF-": the first bytes of every PDF. */
const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d];

/**
 * Why `content` cannot be kept as a document payees read and sign, or null: it must start with
 * `%PDF-`, open in pdf-lib without a password, and have a page tree with at least one page.
 */
export async function pdfProblem(content: Uint8Array): Promise<string | null> {
  if (!PDF_MAGIC.every((byte, i) => content[i] === byte)) {
    return "pdf_base64 is not a PDF (it must start with %PDF-)";
  }
  const encrypted = "pdf_base64 is an encrypted PDF: upload it without a password or encryption";
  const { PDFDocument } = await loadPdfLib();
  let pdf: PDFDocument;
  try {
    // Without ignoreEncryption, pdf-lib refuses an encrypted file instead of misreading it.
    pdf = await PDFDocument.load(content, { updateMetadata: false });
  } catch {
    return await isEncrypted(content)
      ? encrypted
      : "pdf_base64 cannot be read as a PDF (its structure is damaged)";
  }
  if (pdf.isEncrypted) return encrypted;
  let pages: number;
  try {
    // Walks the whole page tree, as appending the certificate page will.
    pages = pdf.getPages().length;
  } catch {
    return "pdf_base64 is a PDF without a readable page tree: it has no page to show or sign";
  }
  return pages === 0 ? "pdf_base64 is a PDF with no page to show or sign" : null;
}

/**
 * Whether pdf-lib refused `content` for its encryption: its errors lose their class (it is
 * compiled to ES5), so the file is read again with the encryption ignored.
 */
async function isEncrypted(content: Uint8Array): Promise<boolean> {
  const { PDFDocument } = await loadPdfLib();
  try {
    const opened = await PDFDocument.load(content, {
      ignoreEncryption: true,
      updateMetadata: false,
    });
    return opened.isEncrypted;
  } catch {
    return false;
  }
}

/** A stored document pdf-lib cannot stamp: damaged or replaced in storage since its upload. */
export class UnstampableDocumentError extends Error {
  constructor(readonly documentName: string, cause: unknown) {
    super(
      `document ${JSON.stringify(documentName)} cannot be stamped: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
    this.name = "UnstampableDocumentError";
  }
}

/**
 * The original PDF with a certificate page appended; throws UnstampableDocumentError when pdf-lib
 * cannot open or extend it.
 */
export async function stampCertificate(
  original: Uint8Array,
  record: SignatureRecord,
): Promise<Uint8Array> {
  try {
    return await appendCertificatePage(original, record);
  } catch (error) {
    throw new UnstampableDocumentError(record.documentName, error);
  }
}

async function appendCertificatePage(
  original: Uint8Array,
  record: SignatureRecord,
): Promise<Uint8Array> {
  const { PDFDocument, rgb, StandardFonts } = await loadPdfLib();
  const pdf = await PDFDocument.load(original, { updateMetadata: false });
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const page = pdf.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
  let y = PAGE_HEIGHT - MARGIN;
  const write = (text: string, options: { size?: number; strong?: boolean } = {}) => {
    const size = options.size ?? 11;
    for (const line of wrap(printable(text), LINE_CHARS_MAX)) {
      page.drawText(line, {
        x: MARGIN,
        y,
        size,
        font: options.strong ? bold : font,
        color: rgb(0.1, 0.1, 0.1),
      });
      y -= size + 6;
    }
  };
  write("Certificate of electronic signature", { size: 18, strong: true });
  y -= 8;
  write(`Document: ${record.documentName}`);
  write(`Signed by: ${record.signer} (${record.role})`);
  write(`Signed at: ${new Date(record.signedAt).toISOString()}`);
  write(`IP address: ${record.ip ?? "unknown"}`);
  write(`User agent: ${record.userAgent ?? "unknown"}`);
  write("SHA-256 of the original document:");
  write(record.originalSha256, { strong: true });
  y -= 8;
  write(
    "The signer typed the name above and ticked a box consenting to sign electronically. " +
      "The hash identifies the exact document that was shown to the signer.",
    { size: 9 },
  );
  return await pdf.save();
}

/** Helvetica's encoding covers Latin-1: anything else is replaced rather than failing the signature. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e\xa0-\xff]/g, "?");
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (let rest = text; rest.length > 0; rest = rest.slice(width)) lines.push(rest.slice(0, width));
  return lines.length > 0 ? lines : [""];
}
