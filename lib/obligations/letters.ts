/**
 * Due-diligence letters as a print file: one US-letter page per owner, addressed to the address
 * on file, saying what is owed, by whom, and that unless claimed it goes to the state as unclaimed
 * property. The company prints and mails them (window envelopes take the address block).
 */
import { formatDollars } from "../platform/money.ts";

/** pdf-lib is loaded when letters are printed, not at every start of the service. */
const loadPdfLib = () => import("pdf-lib");

/** One letter. */
export interface DueDiligenceLetter {
  readonly ownerName: string;
  readonly addressLines: readonly string[];
  readonly amountCents: number;
  readonly claim: string | null;
  /** The state it will be reported to. */
  readonly state: string;
  /** YYYY-MM-DD after which it is reported. */
  readonly reportedAfter: string;
  /** YYYY-MM-DD of the notice. */
  readonly date: string;
}

const PAGE_WIDTH = 612;
const PAGE_HEIGHT = 792;
const MARGIN = 72;
const LINE_CHARS_MAX = 84;
/** Letters one print file holds at most. */
export const LETTERS_PER_FILE_MAX = 2_000;

/** Splits text into lines of at most LINE_CHARS_MAX characters at spaces. */
function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > LINE_CHARS_MAX) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** The standard fonts draw WinAnsi only: anything else is folded or replaced. */
const printable = (text: string) =>
  text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^\x20-\x7e]/g, "?");

/** The letters of a company as one PDF, a page each. */
export async function printLetters(
  company: string,
  letters: readonly DueDiligenceLetter[],
): Promise<Uint8Array> {
  if (letters.length === 0) throw new Error("a letters file needs at least one letter");
  if (letters.length > LETTERS_PER_FILE_MAX) {
    throw new Error(`a letters file holds at most ${LETTERS_PER_FILE_MAX}, got ${letters.length}`);
  }
  const { PDFDocument, StandardFonts } = await loadPdfLib();
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  for (const letter of letters) {
    const page = pdf.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
    let y = PAGE_HEIGHT - MARGIN;
    const write = (text: string, options: { bold?: boolean; gap?: number } = {}) => {
      page.drawText(printable(text), { x: MARGIN, y, size: 11, font: options.bold ? bold : font });
      y -= options.gap ?? 15;
    };
    write(company, { bold: true, gap: 30 });
    write(letter.date, { gap: 30 });
    for (const line of [letter.ownerName, ...letter.addressLines]) write(line);
    y -= 30;
    write("Notice of unclaimed property", { bold: true, gap: 25 });
    const body = [
      `${company} holds ${formatDollars(letter.amountCents)} that belongs to you${
        letter.claim === null ? "" : ` (claim ${letter.claim})`
      }. We have not been able to pay it to you.`,
      `Unless you claim it, the law requires us to report it and send it to the state of ${letter.state} as unclaimed property after ${letter.reportedAfter}.`,
      `To be paid, use the link in the e-mail we sent you, or contact ${company}. If you have already claimed this payment, you do not need to do anything.`,
    ];
    for (const paragraph of body) {
      for (const line of wrap(paragraph)) write(line);
      y -= 10;
    }
  }
  return await pdf.save();
}
