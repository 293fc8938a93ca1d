/**
 * The text of a PDF that pdf-lib wrote with its standard fonts, page by page: each page's content
 * streams are inflated and the hex strings of its text operators decoded (WinAnsi, which is
 * Latin-1 for the letters, digits and signs checks use). Text set in an embedded font (the MICR
 * line) is glyph ids, not characters, and is left out.
 */
import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFRawStream, PDFRef } from "pdf-lib";

/**
 * A TrueType font that stands in for an E-13B font (CHECK_MICR_FONT) in tests: embedding is what is
 * tested, not glyph shapes. Playwright's icon font ships in node_modules with the lock file.
 */
export const STAND_IN_MICR_FONT = new URL(
  "../node_modules/.deno/playwright-core@1.65.1/node_modules/playwright-core/lib/vite/recorder/assets/codicon-DCmgc-ay.ttf",
  import.meta.url,
).pathname;

export async function pdfPageTexts(bytes: Uint8Array): Promise<string[]> {
  const pdf = await PDFDocument.load(bytes);
  return pdf.getPages().map((page) => {
    const contents = page.node.Contents();
    const streams = contents instanceof PDFArray
      ? contents.asArray().map((ref) => pdf.context.lookup(ref as PDFRef))
      : [contents];
    let text = "";
    for (const stream of streams) {
      if (!(stream instanceof PDFRawStream)) continue;
      const operators = new TextDecoder("latin1").decode(decodePDFRawStream(stream).decode());
      for (const match of operators.matchAll(/<([0-9A-Fa-f]*)>\s*Tj/g)) {
        const hex = match[1];
        let line = "";
        for (let i = 0; i < hex.length; i += 2) {
          line += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
        }
        text += `${line}\n`;
      }
    }
    return text;
  });
}

/** Whether the PDF embeds a font program of its own (a FontFile2 or FontFile3 in a descriptor). */
export async function embedsFontFile(bytes: Uint8Array): Promise<boolean> {
  const pdf = await PDFDocument.load(bytes);
  return pdf.context.enumerateIndirectObjects().some(([, object]) =>
    object instanceof PDFDict && /\/FontFile[23]/.test(object.toString())
  );
}
