/**
 * Check print files (issue 19): one check per US-letter page, the check in the top third (the
 * usual check-on-top stock), a stub below for the mailing. Each check shows the payer, the payee's
 * name and address (placed for a window envelope), the date, the amount in figures and in words,
 * the memo (the claim id), the check number and the MICR line. The MICR line is set in the E-13B
 * font CHECK_MICR_FONT names; without a font a bank's reader cannot read the line, so every page
 * then says it is not negotiable. The same function renders a digital check (one check, one page)
 * from its stored register row, so asking again gives the same check.
 *
 * MICR fonts follow the common mapping of the E-13B symbols to letters: A transit, B amount,
 * C on-us, D dash (GnuMICR and most commercial E-13B fonts).
 */
import type { PDFFont, PDFPage } from "pdf-lib";
import { formatDollars } from "../platform/money.ts";

/** pdf-lib is loaded when a file is built, not at every start of the service. */
const loadPdfLib = () => import("pdf-lib");

/** Who writes the checks: printed top left, and the account the MICR line names. */
export interface CheckPayer {
  readonly name: string;
  readonly addressLines: readonly string[];
  /** The check account's ABA routing number (9 digits). */
  readonly routingNumber: string;
  readonly accountNumber: string;
}

/** One check of a print file, as the register holds it. */
export interface PrintableCheck {
  readonly checkNumber: number;
  readonly amountCents: number;
  readonly payeeName: string;
  /** The mailing address, one line each (street, second line, "City, ST 12345"). */
  readonly payeeAddressLines: readonly string[];
  /** Bank-local issue date, YYYY-MM-DD. */
  readonly issueDate: string;
  /** The claim id. */
  readonly memo: string | null;
  /** Postal checks: the postage code printed on the mailing line; null for a digital check. */
  readonly postageCode: string | null;
}

export interface PrintFileInput {
  readonly payer: CheckPayer;
  readonly checks: readonly PrintableCheck[];
  /** The E-13B font's bytes (TrueType or OpenType), or null when CHECK_MICR_FONT names none. */
  readonly micrFontBytes: Uint8Array | null;
}

/** Printed on every page made without a MICR font. */
export const NOT_NEGOTIABLE_MARK = "NOT NEGOTIABLE: print on MICR stock with a MICR font";

/** At most this many checks in one print file, so one file stays a reasonable print job. */
export const PRINT_FILE_CHECKS_MAX = 5_000;

const PAGE_WIDTH = 612;
const PAGE_HEIGHT = 792;
/** The check is the top 3.5 inches of the sheet. */
const CHECK_HEIGHT = 252;
const CHECK_BOTTOM = PAGE_HEIGHT - CHECK_HEIGHT;
const MARGIN = 36;
/** E-13B is printed at 0.117 inch character height: 12 points in the usual fonts. */
const MICR_SIZE = 12;
/** The MICR line's baseline sits 3/16 inch above the check's bottom edge (ANSI X9.13). */
const MICR_BASELINE = CHECK_BOTTOM + 13.5;

/** The MICR line: check number between on-us symbols, routing between transit symbols, account. */
export function micrLine(checkNumber: number, payer: CheckPayer): string {
  if (!/^\d{9}$/.test(payer.routingNumber)) {
    throw new Error(
      `a MICR line needs a 9-digit routing number, got ${payer.routingNumber.length} characters`,
    );
  }
  if (!/^\d{1,17}$/.test(payer.accountNumber)) {
    throw new Error("a MICR line needs an account number of 1 to 17 digits");
  }
  const number = String(checkNumber).padStart(6, "0");
  return `C${number}C A${payer.routingNumber}A ${payer.accountNumber}C`;
}

/** MM/DD/YYYY, the date form printed on US checks, from a YYYY-MM-DD issue date. */
export function checkDate(issueDate: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(issueDate);
  if (!match) throw new Error(`an issue date must be YYYY-MM-DD, got ${issueDate}`);
  return `${match[2]}/${match[3]}/${match[1]}`;
}

/** The payee's mailing address of a check (a payout row): the one the payee entered, else the company's. */
export function addressLinesOf(row: Readonly<Record<string, unknown>>): string[] {
  const details = JSON.parse(String(row.method_details ?? "{}")) as Record<string, unknown>;
  const pick = (key: string, fallback: unknown) =>
    typeof details[key] === "string" && details[key] !== "" ? String(details[key]) : fallback;
  const line1 = pick("address_one", row.address_one);
  const line2 = pick("address_two", row.address_two);
  const city = pick("city", row.city);
  const state = pick("state", row.state);
  const zip = pick("zip_code", row.zip_code);
  const last = [city, [state, zip].filter(Boolean).join(" ")].filter(Boolean).join(", ");
  return [line1, line2, last].filter((line): line is string => typeof line === "string" && !!line);
}

/** Builds the print file (a PDF, one check per page, in the order given). */
export async function buildPrintFile(input: PrintFileInput): Promise<Uint8Array> {
  if (input.checks.length === 0) throw new Error("a print file needs at least one check");
  if (input.checks.length > PRINT_FILE_CHECKS_MAX) {
    throw new Error(
      `a print file holds at most ${PRINT_FILE_CHECKS_MAX} checks, got ${input.checks.length}`,
    );
  }
  const { PDFDocument, StandardFonts } = await loadPdfLib();
  const pdf = await PDFDocument.create();
  pdf.setTitle(
    input.checks.length === 1
      ? `Check ${input.checks[0].checkNumber}`
      : `Checks ${input.checks[0].checkNumber} to ${input.checks.at(-1)!.checkNumber}`,
  );
  pdf.setProducer("disbursements");
  // Fixed dates keep a re-rendered digital check byte for byte the same file.
  pdf.setCreationDate(new Date(`${input.checks[0].issueDate}T00:00:00Z`));
  pdf.setModificationDate(new Date(`${input.checks[0].issueDate}T00:00:00Z`));
  const fonts: Fonts = {
    regular: await pdf.embedFont(StandardFonts.Helvetica),
    bold: await pdf.embedFont(StandardFonts.HelveticaBold),
    micr: await embedMicrFont(pdf, input.micrFontBytes),
  };
  // to-words comes with the first print file, as pdf-lib does: not with every start's routes.
  const { amountInWords } = await import("./words.ts");
  for (const check of input.checks) {
    const page = pdf.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
    drawCheck(page, check, input.payer, fonts, amountInWords(check.amountCents));
  }
  return await pdf.save();
}

interface Fonts {
  readonly regular: PDFFont;
  readonly bold: PDFFont;
  /** Null: no MICR font, the line is printed in Courier and the page is marked not negotiable. */
  readonly micr: PDFFont | null;
}

async function embedMicrFont(
  pdf: Awaited<ReturnType<Awaited<ReturnType<typeof loadPdfLib>>["PDFDocument"]["create"]>>,
  bytes: Uint8Array | null,
): Promise<PDFFont | null> {
  if (!bytes) return null;
  const { default: fontkit } = await import("@pdf-lib/fontkit");
  pdf.registerFontkit(fontkit);
  // The whole font is embedded: subsetting renames glyphs some MICR fonts rely on.
  return await pdf.embedFont(bytes, { subset: false });
}

function drawCheck(
  page: PDFPage,
  check: PrintableCheck,
  payer: CheckPayer,
  fonts: Fonts,
  words: string,
): void {
  const text = (
    value: string,
    x: number,
    y: number,
    options: { size?: number; font?: PDFFont } = {},
  ) => {
    const font = options.font ?? fonts.regular;
    page.drawText(printable(value, font), { x, y, size: options.size ?? 10, font });
  };
  const right = PAGE_WIDTH - MARGIN;
  const top = PAGE_HEIGHT - MARGIN;

  // Payer, top left.
  text(payer.name, MARGIN, top - 4, { size: 12, font: fonts.bold });
  payer.addressLines.forEach((line, i) => text(line, MARGIN, top - 18 - i * 12, { size: 9 }));

  // Check number and date, top right.
  const number = String(check.checkNumber);
  text(number, right - fonts.bold.widthOfTextAtSize(number, 12), top - 4, {
    size: 12,
    font: fonts.bold,
  });
  const date = `Date ${checkDate(check.issueDate)}`;
  text(date, right - fonts.regular.widthOfTextAtSize(date, 10), top - 30);

  // Payee line and the amount in figures.
  const payeeY = top - 78;
  text("PAY TO THE", MARGIN, payeeY + 10, { size: 7 });
  text("ORDER OF", MARGIN, payeeY, { size: 7 });
  text(check.payeeName, MARGIN + 50, payeeY, { size: 12, font: fonts.bold });
  page.drawLine({
    start: { x: MARGIN + 48, y: payeeY - 3 },
    end: { x: right - 110, y: payeeY - 3 },
    thickness: 0.5,
  });
  const figures = `**${formatDollars(check.amountCents).slice(1)}`;
  page.drawRectangle({
    x: right - 100,
    y: payeeY - 6,
    width: 100,
    height: 22,
    borderWidth: 0.75,
  });
  text("$", right - 96, payeeY, { size: 12, font: fonts.bold });
  text(figures, right - 4 - fonts.bold.widthOfTextAtSize(figures, 12), payeeY, {
    size: 12,
    font: fonts.bold,
  });

  // The amount in words, filled to the line's end so nothing can be added after it.
  const wordsY = payeeY - 28;
  const wordsWidthMax = right - MARGIN;
  let wordsSize = 10;
  while (wordsSize > 6 && fonts.regular.widthOfTextAtSize(words, wordsSize) > wordsWidthMax - 20) {
    wordsSize -= 0.5;
  }
  const fillWidth = fonts.regular.widthOfTextAtSize("*", wordsSize);
  const fillCount = Math.max(
    0,
    Math.floor((wordsWidthMax - fonts.regular.widthOfTextAtSize(words, wordsSize)) / fillWidth) - 1,
  );
  text(`${words}${"*".repeat(fillCount)}`, MARGIN, wordsY, { size: wordsSize });
  page.drawLine({
    start: { x: MARGIN, y: wordsY - 3 },
    end: { x: right, y: wordsY - 3 },
    thickness: 0.5,
  });

  // The payee's address, where a window envelope shows it.
  const addressY = wordsY - 24;
  text(check.payeeName, MARGIN + 50, addressY, { size: 10 });
  check.payeeAddressLines.forEach((line, i) =>
    text(line, MARGIN + 50, addressY - 12 * (i + 1), { size: 10 })
  );

  // Memo and signature line.
  const memoY = CHECK_BOTTOM + 44;
  text(`MEMO ${check.memo ?? ""}`, MARGIN, memoY, { size: 9 });
  page.drawLine({
    start: { x: right - 200, y: memoY - 3 },
    end: { x: right, y: memoY - 3 },
    thickness: 0.5,
  });
  text("AUTHORIZED SIGNATURE", right - 200, memoY - 12, { size: 7 });

  // The MICR line.
  const micr = micrLine(check.checkNumber, payer);
  if (fonts.micr) {
    page.drawText(micr, { x: MARGIN + 90, y: MICR_BASELINE, size: MICR_SIZE, font: fonts.micr });
  } else {
    text(micr, MARGIN + 90, MICR_BASELINE, { size: 10 });
    text(NOT_NEGOTIABLE_MARK, MARGIN, CHECK_BOTTOM + 110, { size: 13, font: fonts.bold });
  }

  // The perforation and the stub the payee keeps.
  page.drawLine({
    start: { x: 0, y: CHECK_BOTTOM },
    end: { x: PAGE_WIDTH, y: CHECK_BOTTOM },
    thickness: 0.5,
    dashArray: [4, 4],
  });
  const stubTop = CHECK_BOTTOM - 30;
  text(`${payer.name}  ·  Check ${check.checkNumber}`, MARGIN, stubTop, {
    size: 10,
    font: fonts.bold,
  });
  text(`Pay to: ${check.payeeName}`, MARGIN, stubTop - 16);
  text(`Amount: ${formatDollars(check.amountCents)}`, MARGIN, stubTop - 30);
  text(`Date: ${checkDate(check.issueDate)}`, MARGIN, stubTop - 44);
  text(`Claim: ${check.memo ?? "-"}`, MARGIN, stubTop - 58);
  if (check.postageCode) {
    text(`Mail ${check.postageCode}: ${mailingLine(check)}`, MARGIN, stubTop - 80, {
      size: 10,
      font: fonts.bold,
    });
  }
  if (!fonts.micr) {
    text(NOT_NEGOTIABLE_MARK, MARGIN, MARGIN, { size: 10, font: fonts.bold });
  }
}

/** The mailing line of a postal check: the address on one line, after its postage code. */
function mailingLine(check: PrintableCheck): string {
  return [check.payeeName, ...check.payeeAddressLines].join(", ");
}

/**
 * `value` in the characters `font` can encode: accents are dropped where the letter exists
 * without them (Ł stays unknown, é becomes e only when é is missing), anything else becomes "?",
 * so a payee's name never makes a print file fail.
 */
function printable(value: string, font: PDFFont): string {
  const known = characterSet(font);
  let out = "";
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (known.has(code)) {
      out += char;
      continue;
    }
    const bare = char.normalize("NFD").replace(/\p{M}/gu, "");
    out += [...bare].every((c) => known.has(c.codePointAt(0)!)) && bare ? bare : "?";
  }
  return out;
}

const characterSets = new WeakMap<PDFFont, Set<number>>();

function characterSet(font: PDFFont): Set<number> {
  let known = characterSets.get(font);
  if (!known) {
    known = new Set(font.getCharacterSet());
    characterSets.set(font, known);
  }
  return known;
}
