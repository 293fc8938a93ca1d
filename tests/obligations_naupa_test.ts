/**
 * The NAUPA report file: a golden file for a known holder and properties, the strict reader on
 * it and on files it must refuse, and a property: any set of items makes a file the reader takes
 * whose SUMINFO totals equal its items.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type NaupaHolder,
  type NaupaProperty,
  RECORD_LENGTH,
  writeNaupaReport,
} from "../lib/obligations/naupa.ts";
import { readNaupaStrictly } from "./naupa_reader.ts";

const GOLDEN = new URL("./obligations_files/naupa_il_2026.txt", import.meta.url);

const holder: NaupaHolder = {
  taxId: "123456789",
  name: "Acme Mutual",
  incorporationState: "DE",
  reportState: "IL",
  reportYear: 2026,
  cutoffDate: "20260630",
};

const property = (over: Partial<NaupaProperty> = {}): NaupaProperty => ({
  ownerLast: "Doe",
  ownerFirst: "Pat",
  address1: "9 Elm St",
  address2: "",
  city: "Springfield",
  state: "IL",
  zip: "62701",
  country: "USA",
  transactionDate: "20260105",
  lastActivityDate: "20260204",
  propertyType: "IN01",
  amountCents: 50_000,
  checkNumber: "5001",
  accountNumber: "po_golden1",
  description: "claim CLM-35",
  dueDiligenceDate: "20260206",
  additionalOwners: [],
  ...over,
});

const properties = [
  property(),
  property({
    ownerLast: "Núñez",
    ownerFirst: "José",
    address1: "1 Main St",
    address2: "Apt 2",
    city: "Chicago",
    zip: "60601-1234",
    propertyType: "IN07",
    amountCents: 1_234,
    checkNumber: "",
    accountNumber: "po_golden2",
    description: "claim payment",
    dueDiligenceDate: "",
    additionalOwners: [{ last: "First Bank", first: "", relationship: "Lienholder" }],
  }),
];

Deno.test("the NAUPA file of a holder and two properties is the golden file, and the strict reader takes it", async () => {
  const { text, totals } = writeNaupaReport(holder, properties);
  assert.equal(text, await Deno.readTextFile(GOLDEN));
  assert.deepEqual(totals, {
    records: 5,
    properties: 2,
    reportedCents: 51_234,
    remittedCents: 51_234,
  });
  const read = readNaupaStrictly(text);
  assert.deepEqual(read.holder, {
    taxId: "123456789",
    reportYear: 2026,
    reportState: "IL",
    cutoff: "20260630",
  });
  assert.deepEqual(
    read.properties.map((p) => [p.type, p.amountCents, p.accountNumber, p.additionalOwners]),
    [
      ["IN01", 50_000, "po_golden1", 0],
      ["IN07", 1_234, "po_golden2", 1],
    ],
  );
  // Accents are folded to ASCII, the ZIP+4 loses its hyphen, amounts are cents zero-filled.
  const second = text.split("\r\n")[2];
  assert.equal(second.slice(7, 37), "Nunez".padEnd(30, " "));
  assert.equal(second.slice(149, 158), "606011234");
  assert.equal(second.slice(181, 191), "0000001234");
});

Deno.test("the strict reader refuses a short record, a bad code, bad digits and totals that do not add up", () => {
  const { text } = writeNaupaReport(holder, properties);
  const lines = text.split("\r\n");
  const join = (ls: string[]) => ls.join("\r\n");
  const cases: [string, string, RegExp][] = [
    ["no CR/LF", text.slice(0, -2), /does not end with CR\/LF/],
    ["short", join([lines[0].slice(0, 600), ...lines.slice(1)]), /record 1: 600 bytes, not 625/],
    [
      "type",
      join([lines[0], lines[1].slice(0, 177) + "XX99" + lines[1].slice(181), ...lines.slice(2)]),
      /PROP-TYPE XX99/,
    ],
    [
      "digits",
      join([
        lines[0],
        lines[1].slice(0, 181) + "00000 0000" + lines[1].slice(191),
        ...lines.slice(2),
      ]),
      /PROP-AMOUNT-REPORTED/,
    ],
    [
      "totals",
      join([...lines.slice(0, 4), lines[4].slice(0, 13) + "000000051235" + lines[4].slice(25), ""]),
      /SUM-AMOUNT-REPORTED: 51235, the records make 51234/,
    ],
    [
      "date",
      join([
        lines[0],
        lines[1].slice(0, 169) + "20260231" + lines[1].slice(177),
        ...lines.slice(2),
      ]),
      /20260231 is no date/,
    ],
  ];
  for (const [name, bad, error] of cases) assert.throws(() => readNaupaStrictly(bad), error, name);
});

Deno.test("property: any items make a file the strict reader takes, its totals equal to the items", () => {
  const item = fc.record({
    ownerLast: fc.string({ maxLength: 40 }),
    ownerFirst: fc.string({ maxLength: 25 }),
    amountCents: fc.integer({ min: 1, max: 9_999_999_999 }),
    propertyType: fc.constantFrom("IN01", "IN07"),
    parties: fc.integer({ min: 0, max: 2 }),
  });
  fc.assert(fc.property(fc.array(item, { maxLength: 30 }), (items) => {
    const props = items.map((i, n) =>
      property({
        ownerLast: i.ownerLast,
        ownerFirst: i.ownerFirst,
        amountCents: i.amountCents,
        propertyType: i.propertyType,
        accountNumber: `po_${n}`,
        additionalOwners: Array.from({ length: i.parties }, () => ({
          last: "Party",
          first: "",
          relationship: "",
        })),
      })
    );
    const { text, totals } = writeNaupaReport(holder, props);
    const read = readNaupaStrictly(text);
    assert.equal(read.totals.reportedCents, items.reduce((t, i) => t + i.amountCents, 0));
    assert.equal(read.totals.properties, items.length);
    assert.equal(totals.records, 2 + items.length + items.reduce((t, i) => t + i.parties, 0));
    assert.ok(text.split("\r\n").slice(0, -1).every((r) => r.length === RECORD_LENGTH));
  }));
});
