/**
 * The NAUPA standard electronic format of a holder's unclaimed property report, written without
 * storage: fixed-width ASCII records of RECORD_LENGTH bytes, each led by its TR-CODE (1 HOLDER,
 * 2 PROPERTY, 3 PROPADD, 9 SUMINFO) and ended by CR/LF. Character fields (C) are left-justified
 * and space-filled; numeric fields (N) right-justified and zero-filled, amounts in cents with the
 * decimal point implied. The fields and their order are the layouts below; a field the service
 * has no data for is left blank (spaces, or zeros when numeric).
 */

/** Bytes of every record, its TR-CODE included (the NAUPA II record). */
export const RECORD_LENGTH = 625;
/** Records one file may hold (a state's reader refuses more). */
export const RECORDS_MAX = 99_999;

/** One field of a record: its name, type and width. */
export interface NaupaField {
  readonly name: string;
  readonly type: "C" | "N";
  readonly length: number;
}

const C = (name: string, length: number): NaupaField => ({ name, type: "C", length });
const N = (name: string, length: number): NaupaField => ({ name, type: "N", length });

/** The layouts of the records written, in field order; FILLER pads each to RECORD_LENGTH. */
export const LAYOUTS = {
  "1": [
    C("TR-CODE", 1),
    C("HOLDER-TAX-ID", 9),
    C("HOLDER-TAX-ID-EXT", 4),
    N("HOLDER-REPORT-YEAR", 4),
    N("HOLDER-REPORT-NUMBER", 2),
    C("HOLDER-NAME", 40),
    C("HOLDER-STATE-OF-INCORPORATION", 2),
    C("HOLDER-REPORT-STATE", 2),
    C("HOLDER-REPORT-TYPE", 1),
    N("HOLDER-CUTOFF-DATE", 8),
    C("HOLDER-CONTACT-NAME", 40),
  ],
  "2": [
    C("TR-CODE", 1),
    N("PROP-SEQUENCE-NUMBER", 6),
    C("PROP-OWNER-NAME-LAST", 30),
    C("PROP-OWNER-NAME-FIRST", 20),
    C("PROP-OWNER-ADDRESS-1", 30),
    C("PROP-OWNER-ADDRESS-2", 30),
    C("PROP-OWNER-CITY", 30),
    C("PROP-OWNER-STATE", 2),
    C("PROP-OWNER-ZIP", 9),
    C("PROP-OWNER-COUNTRY-CODE", 3),
    N("PROP-START-TRANSACTION-DATE", 8),
    N("PROP-DATE-OF-LAST-ACTIVITY", 8),
    C("PROP-TYPE", 4),
    N("PROP-AMOUNT-REPORTED", 10),
    N("PROP-DEDUCTION-AMOUNT", 10),
    N("PROP-AMOUNT-REMITTED", 10),
    C("PROP-CHECK-NUMBER", 20),
    C("PROP-ACCOUNT-NUMBER", 30),
    C("PROP-DESCRIPTION", 50),
    N("PROP-DUE-DILIGENCE-DATE", 8),
  ],
  "3": [
    C("TR-CODE", 1),
    N("PROP-SEQUENCE-NUMBER", 6),
    C("ADD-OWNER-NAME-LAST", 30),
    C("ADD-OWNER-NAME-FIRST", 20),
    C("ADD-OWNER-RELATIONSHIP", 30),
  ],
  "9": [
    C("TR-CODE", 1),
    N("SUM-NUMBER-OF-RECORDS", 6),
    N("SUM-NUMBER-OF-PROPERTIES", 6),
    N("SUM-AMOUNT-REPORTED", 12),
    N("SUM-DEDUCTION-AMOUNT", 12),
    N("SUM-AMOUNT-REMITTED", 12),
  ],
} as const satisfies Record<string, readonly NaupaField[]>;

export type RecordCode = keyof typeof LAYOUTS;

/** The holder of a report. */
export interface NaupaHolder {
  readonly taxId: string;
  readonly name: string;
  readonly incorporationState: string | null;
  /** The state the report goes to. */
  readonly reportState: string;
  readonly reportYear: number;
  /** YYYYMMDD of the report's cut-off. */
  readonly cutoffDate: string;
}

/** One property of a report, and the additional owners its PROPADD records name. */
export interface NaupaProperty {
  readonly ownerLast: string;
  readonly ownerFirst: string;
  readonly address1: string;
  readonly address2: string;
  readonly city: string;
  readonly state: string;
  readonly zip: string;
  /** "USA", or blank when the owner has no address on file. */
  readonly country: string;
  /** YYYYMMDD. */
  readonly transactionDate: string;
  readonly lastActivityDate: string;
  readonly propertyType: string;
  readonly amountCents: number;
  readonly checkNumber: string;
  /** The holder's own reference of the property (the payout id). */
  readonly accountNumber: string;
  readonly description: string;
  /** YYYYMMDD of the due-diligence notice, or "" when none was due. */
  readonly dueDiligenceDate: string;
  readonly additionalOwners: readonly { last: string; first: string; relationship: string }[];
}

/**
 * Printable ASCII only reaches a record: accents are folded (José: Jose), anything else becomes a
 * space, and the text is trimmed so that it starts in the field's first byte.
 */
function ascii(value: string): string {
  return value.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^\x20-\x7e]/g, " ")
    .trim();
}

/** One field's text: C left-justified and space-filled (cut at its width), N zero-filled. */
function field(spec: NaupaField, value: string | number): string {
  if (spec.type === "N") {
    const digits = typeof value === "number" ? String(value) : value === "" ? "0" : value;
    if (!/^\d+$/.test(digits) || digits.length > spec.length) {
      throw new Error(`${spec.name}: ${JSON.stringify(value)} does not fit N${spec.length}`);
    }
    return digits.padStart(spec.length, "0");
  }
  return ascii(String(value)).slice(0, spec.length).trimEnd().padEnd(spec.length, " ");
}

/** One record of `code` from its values by field name; FILLER pads it to RECORD_LENGTH. */
function record(code: RecordCode, values: Readonly<Record<string, string | number>>): string {
  const text = LAYOUTS[code].map((spec) =>
    field(spec, spec.name === "TR-CODE" ? code : values[spec.name] ?? "")
  ).join("");
  if (text.length > RECORD_LENGTH) throw new Error(`record ${code} is ${text.length} bytes`);
  return text.padEnd(RECORD_LENGTH, " ");
}

/** The totals a SUMINFO record carries, which must equal the file's items. */
export interface NaupaTotals {
  readonly records: number;
  readonly properties: number;
  readonly reportedCents: number;
  readonly remittedCents: number;
}

/** Writes one holder's report: HOLDER, each PROPERTY with its PROPADDs, SUMINFO, CR/LF after each. */
export function writeNaupaReport(
  holder: NaupaHolder,
  properties: readonly NaupaProperty[],
): { text: string; totals: NaupaTotals } {
  const records = [record("1", {
    "HOLDER-TAX-ID": holder.taxId,
    "HOLDER-REPORT-YEAR": holder.reportYear,
    "HOLDER-REPORT-NUMBER": 1,
    "HOLDER-NAME": holder.name,
    "HOLDER-STATE-OF-INCORPORATION": holder.incorporationState ?? "",
    "HOLDER-REPORT-STATE": holder.reportState,
    // A remittance report: the money goes with it.
    "HOLDER-REPORT-TYPE": "R",
    "HOLDER-CUTOFF-DATE": holder.cutoffDate,
    "HOLDER-CONTACT-NAME": holder.name,
  })];
  let reportedCents = 0;
  for (const [index, p] of properties.entries()) {
    const sequence = index + 1;
    reportedCents += p.amountCents;
    records.push(record("2", {
      "PROP-SEQUENCE-NUMBER": sequence,
      "PROP-OWNER-NAME-LAST": p.ownerLast,
      "PROP-OWNER-NAME-FIRST": p.ownerFirst,
      "PROP-OWNER-ADDRESS-1": p.address1,
      "PROP-OWNER-ADDRESS-2": p.address2,
      "PROP-OWNER-CITY": p.city,
      "PROP-OWNER-STATE": p.state,
      "PROP-OWNER-ZIP": p.zip.replace("-", ""),
      "PROP-OWNER-COUNTRY-CODE": p.country,
      "PROP-START-TRANSACTION-DATE": p.transactionDate,
      "PROP-DATE-OF-LAST-ACTIVITY": p.lastActivityDate,
      "PROP-TYPE": p.propertyType,
      "PROP-AMOUNT-REPORTED": p.amountCents,
      "PROP-DEDUCTION-AMOUNT": 0,
      "PROP-AMOUNT-REMITTED": p.amountCents,
      "PROP-CHECK-NUMBER": p.checkNumber,
      "PROP-ACCOUNT-NUMBER": p.accountNumber,
      "PROP-DESCRIPTION": p.description,
      "PROP-DUE-DILIGENCE-DATE": p.dueDiligenceDate,
    }));
    for (const owner of p.additionalOwners) {
      records.push(record("3", {
        "PROP-SEQUENCE-NUMBER": sequence,
        "ADD-OWNER-NAME-LAST": owner.last,
        "ADD-OWNER-NAME-FIRST": owner.first,
        "ADD-OWNER-RELATIONSHIP": owner.relationship,
      }));
    }
  }
  const totals: NaupaTotals = {
    records: records.length + 1,
    properties: properties.length,
    reportedCents,
    remittedCents: reportedCents,
  };
  if (totals.records > RECORDS_MAX) {
    throw new Error(`a report holds at most ${RECORDS_MAX} records, this one ${totals.records}`);
  }
  records.push(record("9", {
    "SUM-NUMBER-OF-RECORDS": totals.records,
    "SUM-NUMBER-OF-PROPERTIES": totals.properties,
    "SUM-AMOUNT-REPORTED": totals.reportedCents,
    "SUM-DEDUCTION-AMOUNT": 0,
    "SUM-AMOUNT-REMITTED": totals.remittedCents,
  }));
  return { text: records.map((r) => `${r}\r\n`).join(""), totals };
}

/** YYYYMMDD of a time (UTC). */
export function naupaDate(at: number): string {
  return new Date(at).toISOString().slice(0, 10).replaceAll("-", "");
}
