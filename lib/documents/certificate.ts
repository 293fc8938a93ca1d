/**
 * E-signature certificates (DESIGN 9): signing appends a page to the original PDF naming the
 * signer, the time, the IP address, the user agent and the SHA-256 of the original, so the signed
 * copy proves what was signed and by whom. A PDF that pdf-lib cannot parse is not refused: the
 * certificate becomes the first page of a new PDF that carries the original as an attachment.
 */
import { PDFDocument, rgb, StandardFonts } from "pdf-lib";

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

/** The original PDF with a certificate page appended. */
export async function stampCertificate(
  original: Uint8Array,
  record: SignatureRecord,
): Promise<Uint8Array> {
  let pdf: PDFDocument;
  try {
    pdf = await PDFDocument.load(original, { updateMetadata: false });
  } catch {
    pdf = await PDFDocument.create();
    await pdf.attach(original, `${safeFileName(record.documentName)}.pdf`, {
      mimeType: "application/pdf",
      description: "The document as uploaded, which this certificate covers",
    });
  }
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

function safeFileName(name: string): string {
  return name.replace(/[^\w.\- ]/g, "_");
}
