import assert from "node:assert/strict";
import {
  buildPrintFile,
  checkDate,
  type CheckPayer,
  micrLine,
  NOT_NEGOTIABLE_MARK,
  type PrintableCheck,
} from "../lib/checks/print.ts";
import { amountInWords } from "../lib/checks/words.ts";
import { embedsFontFile, pdfPageTexts, STAND_IN_MICR_FONT } from "./check_pdf_text.ts";
import { PDFDocument } from "pdf-lib";

const payer: CheckPayer = {
  name: "Acme Mutual",
  addressLines: ["1 Insurance Plaza", "Hartford, CT 06103"],
  routingNumber: "011000015",
  accountNumber: "123456789",
};

const check = (overrides: Partial<PrintableCheck> = {}): PrintableCheck => ({
  checkNumber: 1001,
  amountCents: 123_456,
  payeeName: "Jane Roe",
  payeeAddressLines: ["12 Elm Street", "Apt 4", "Springfield, IL 62701"],
  issueDate: "2026-11-24",
  memo: "CLM-2026-0042",
  postageCode: "FC",
  ...overrides,
});

const standInFont = () => Deno.readFile(STAND_IN_MICR_FONT);

Deno.test("amounts in words: dollars in words and cents over 100", () => {
  const table: [number, string][] = [
    [1, "Zero and 01/100 Dollars"],
    [100, "One and 00/100 Dollars"],
    [123_456, "One Thousand Two Hundred Thirty Four and 56/100 Dollars"],
    [100_000_000, "One Million and 00/100 Dollars"],
    [99_999_999, "Nine Hundred Ninety Nine Thousand Nine Hundred Ninety Nine and 99/100 Dollars"],
  ];
  for (const [cents, words] of table) assert.equal(amountInWords(cents), words, `${cents}`);
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => amountInWords(bad));
});

Deno.test("the MICR line and the check date", () => {
  assert.equal(micrLine(1001, payer), "C001001C A011000015A 123456789C");
  assert.equal(micrLine(1234567, payer), "C1234567C A011000015A 123456789C");
  assert.throws(() => micrLine(1, { ...payer, routingNumber: "01100001" }));
  assert.throws(() => micrLine(1, { ...payer, accountNumber: "12-34" }));
  assert.equal(checkDate("2026-01-05"), "01/05/2026");
  assert.throws(() => checkDate("2026-1-5"));
});

Deno.test("a print file without a MICR font: one page per check, every page not negotiable", async () => {
  const checks = [
    check(),
    check({ checkNumber: 1002, amountCents: 5_000, payeeName: "Łukasz Żółw", postageCode: "PR" }),
    check({ checkNumber: 1003, amountCents: 1, memo: null, postageCode: null }),
  ];
  const bytes = await buildPrintFile({ payer, checks, micrFontBytes: null });
  const pdf = await PDFDocument.load(bytes);
  assert.equal(pdf.getPageCount(), 3);
  for (const page of pdf.getPages()) {
    assert.deepEqual(page.getSize(), { width: 612, height: 792 });
  }
  const texts = await pdfPageTexts(bytes);
  assert.equal(texts.length, 3);
  const [first, second, third] = texts;
  for (const text of texts) assert.ok(text.includes(NOT_NEGOTIABLE_MARK), text);
  assert.ok(first.includes("Jane Roe"));
  assert.ok(first.includes("One Thousand Two Hundred Thirty Four and 56/100 Dollars"));
  assert.ok(first.includes("1001\n"));
  assert.ok(first.includes("**1,234.56"));
  assert.ok(first.includes("Date 11/24/2026"));
  assert.ok(first.includes("MEMO CLM-2026-0042"));
  assert.ok(first.includes("Acme Mutual"));
  assert.ok(first.includes("Springfield, IL 62701"));
  assert.ok(first.includes("Mail FC: Jane Roe, 12 Elm Street, Apt 4, Springfield, IL 62701"));
  assert.ok(first.includes("C001001C A011000015A 123456789C"));
  // Letters the standard font lacks lose their accents or become "?", never fail the file.
  assert.ok(second.includes("Pay to: ?ukasz Zó?w"), second);
  assert.ok(second.includes("Fifty and 00/100 Dollars"));
  assert.ok(second.includes("Mail PR:"));
  assert.ok(third.includes("Zero and 01/100 Dollars"));
  assert.ok(!third.includes("Mail "), "a check without a postage code has no mailing line");
  assert.equal(await embedsFontFile(bytes), false);
});

Deno.test("a print file with a MICR font embeds it and carries no not-negotiable mark", async () => {
  const bytes = await buildPrintFile({
    payer,
    checks: [check(), check({ checkNumber: 1002 })],
    micrFontBytes: await standInFont(),
  });
  const texts = await pdfPageTexts(bytes);
  assert.equal(texts.length, 2);
  for (const text of texts) {
    assert.ok(!text.includes("NOT NEGOTIABLE"), text);
    // The MICR line is set in the embedded font (glyph ids), not in Helvetica.
    assert.ok(!text.includes("A011000015A"));
  }
  assert.equal(await embedsFontFile(bytes), true);
});

Deno.test("rendering the same check again gives the same bytes", async () => {
  const first = await buildPrintFile({ payer, checks: [check()], micrFontBytes: null });
  const again = await buildPrintFile({ payer, checks: [check()], micrFontBytes: null });
  assert.deepEqual(again, first);
});

Deno.test("a print file refuses no checks, and a check with a bad account", async () => {
  await assert.rejects(buildPrintFile({ payer, checks: [], micrFontBytes: null }));
  await assert.rejects(
    buildPrintFile({
      payer: { ...payer, routingNumber: "12" },
      checks: [check()],
      micrFontBytes: null,
    }),
  );
});
