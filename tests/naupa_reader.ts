/**
 * A strict reader of NAUPA standard electronic report files, written from the format's rules
 * apart from the writer: every record 625 bytes and CR/LF, a known TR-CODE in the order HOLDER,
 * PROPERTY (each followed by its PROPADDs), SUMINFO; C fields printable ASCII, N fields digits
 * only; property types from the NAUPA list; dates real YYYYMMDD; SUMINFO totals equal to the
 * records. It throws naming the record and the field at fault.
 */

const RECORD = 625;

/** [name, type, from (1-based), length] of the fields the reader checks, per TR-CODE. */
const FIELDS: Record<string, [string, "C" | "N", number, number][]> = {
  "1": [
    ["HOLDER-TAX-ID", "C", 2, 9],
    ["HOLDER-REPORT-YEAR", "N", 15, 4],
    ["HOLDER-REPORT-NUMBER", "N", 19, 2],
    ["HOLDER-NAME", "C", 21, 40],
    ["HOLDER-STATE-OF-INCORPORATION", "C", 61, 2],
    ["HOLDER-REPORT-STATE", "C", 63, 2],
    ["HOLDER-REPORT-TYPE", "C", 65, 1],
    ["HOLDER-CUTOFF-DATE", "N", 66, 8],
  ],
  "2": [
    ["PROP-SEQUENCE-NUMBER", "N", 2, 6],
    ["PROP-OWNER-NAME-LAST", "C", 8, 30],
    ["PROP-OWNER-NAME-FIRST", "C", 38, 20],
    ["PROP-OWNER-ADDRESS-1", "C", 58, 30],
    ["PROP-OWNER-CITY", "C", 118, 30],
    ["PROP-OWNER-STATE", "C", 148, 2],
    ["PROP-OWNER-ZIP", "C", 150, 9],
    ["PROP-START-TRANSACTION-DATE", "N", 162, 8],
    ["PROP-DATE-OF-LAST-ACTIVITY", "N", 170, 8],
    ["PROP-TYPE", "C", 178, 4],
    ["PROP-AMOUNT-REPORTED", "N", 182, 10],
    ["PROP-DEDUCTION-AMOUNT", "N", 192, 10],
    ["PROP-AMOUNT-REMITTED", "N", 202, 10],
    ["PROP-ACCOUNT-NUMBER", "C", 232, 30],
    ["PROP-DUE-DILIGENCE-DATE", "N", 312, 8],
  ],
  "3": [
    ["PROP-SEQUENCE-NUMBER", "N", 2, 6],
    ["ADD-OWNER-NAME-LAST", "C", 8, 30],
  ],
  "9": [
    ["SUM-NUMBER-OF-RECORDS", "N", 2, 6],
    ["SUM-NUMBER-OF-PROPERTIES", "N", 8, 6],
    ["SUM-AMOUNT-REPORTED", "N", 14, 12],
    ["SUM-DEDUCTION-AMOUNT", "N", 26, 12],
    ["SUM-AMOUNT-REMITTED", "N", 38, 12],
  ],
};

/** The insurance and check property types of the NAUPA list a payout may be reported under. */
const PROPERTY_TYPES = new Set(["IN01", "IN07"]);

export interface ReadProperty {
  readonly sequence: number;
  readonly type: string;
  readonly ownerState: string;
  readonly amountCents: number;
  readonly accountNumber: string;
  readonly additionalOwners: number;
}

export interface ReadReport {
  readonly holder: { taxId: string; reportYear: number; reportState: string; cutoff: string };
  readonly properties: ReadProperty[];
  readonly totals: { records: number; properties: number; reportedCents: number };
}

function date(value: string, where: string): void {
  if (value === "00000000") return;
  const at = Date.UTC(+value.slice(0, 4), +value.slice(4, 6) - 1, +value.slice(6, 8));
  if (new Date(at).toISOString().slice(0, 10).replaceAll("-", "") !== value) {
    throw new Error(`${where}: ${value} is no date YYYYMMDD`);
  }
}

/** Reads a report file strictly, or throws naming the first fault. */
export function readNaupaStrictly(text: string): ReadReport {
  if (!text.endsWith("\r\n")) throw new Error("the file does not end with CR/LF");
  const records = text.slice(0, -2).split("\r\n");
  const read = records.map((record, index) => {
    const where = `record ${index + 1}`;
    if (record.length !== RECORD) {
      throw new Error(`${where}: ${record.length} bytes, not ${RECORD}`);
    }
    if (!/^[\x20-\x7e]*$/.test(record)) {
      throw new Error(`${where}: a byte that is not printable ASCII`);
    }
    const code = record[0];
    const fields = FIELDS[code];
    if (!fields) throw new Error(`${where}: TR-CODE ${JSON.stringify(code)} is unknown`);
    const values: Record<string, string> = {};
    for (const [name, type, from, length] of fields) {
      const value = record.slice(from - 1, from - 1 + length);
      if (type === "N" && !/^\d+$/.test(value)) {
        throw new Error(`${where} ${name}: ${JSON.stringify(value)} is not zero-filled digits`);
      }
      if (type === "C" && value !== value.trimEnd().padEnd(length, " ")) {
        throw new Error(`${where} ${name}: not left-justified`);
      }
      if (type === "C" && /^ /.test(value) && value.trim() !== "") {
        throw new Error(`${where} ${name}: ${JSON.stringify(value)} is not left-justified`);
      }
      if (name.includes("DATE")) date(value, `${where} ${name}`);
      values[name] = value;
    }
    return { code, values, where };
  });
  if (read[0]?.code !== "1") throw new Error("record 1 is not a HOLDER record");
  if (read.at(-1)?.code !== "9") throw new Error("the last record is not a SUMINFO record");
  const holder = read[0].values;
  if (holder["HOLDER-REPORT-TYPE"] !== "R") throw new Error("record 1: not a remittance report");
  const properties: ReadProperty[] = [];
  for (const { code, values, where } of read.slice(1, -1)) {
    if (code === "1" || code === "9") throw new Error(`${where}: a second HOLDER or SUMINFO`);
    const sequence = Number(values["PROP-SEQUENCE-NUMBER"]);
    if (code === "3") {
      const last = properties.at(-1);
      if (!last || last.sequence !== sequence) {
        throw new Error(`${where}: PROPADD ${sequence} follows no PROPERTY ${sequence}`);
      }
      properties[properties.length - 1] = { ...last, additionalOwners: last.additionalOwners + 1 };
      continue;
    }
    if (sequence !== properties.length + 1) {
      throw new Error(`${where}: PROPERTY ${sequence} out of sequence`);
    }
    const type = values["PROP-TYPE"];
    if (!PROPERTY_TYPES.has(type)) {
      throw new Error(`${where}: PROP-TYPE ${type} is not a known code`);
    }
    const reported = Number(values["PROP-AMOUNT-REPORTED"]);
    const deducted = Number(values["PROP-DEDUCTION-AMOUNT"]);
    if (Number(values["PROP-AMOUNT-REMITTED"]) !== reported - deducted) {
      throw new Error(`${where}: remitted is not reported less deductions`);
    }
    properties.push({
      sequence,
      type,
      ownerState: values["PROP-OWNER-STATE"].trim(),
      amountCents: reported,
      accountNumber: values["PROP-ACCOUNT-NUMBER"].trim(),
      additionalOwners: 0,
    });
  }
  const sum = read.at(-1)!.values;
  const reportedCents = properties.reduce((total, p) => total + p.amountCents, 0);
  const checks: [string, number][] = [
    ["SUM-NUMBER-OF-RECORDS", records.length],
    ["SUM-NUMBER-OF-PROPERTIES", properties.length],
    ["SUM-AMOUNT-REPORTED", reportedCents],
    ["SUM-AMOUNT-REMITTED", reportedCents],
  ];
  for (const [name, expected] of checks) {
    if (Number(sum[name]) !== expected) {
      throw new Error(`SUMINFO ${name}: ${Number(sum[name])}, the records make ${expected}`);
    }
  }
  return {
    holder: {
      taxId: holder["HOLDER-TAX-ID"].trim(),
      reportYear: Number(holder["HOLDER-REPORT-YEAR"]),
      reportState: holder["HOLDER-REPORT-STATE"],
      cutoff: holder["HOLDER-CUTOFF-DATE"],
    },
    properties,
    totals: { records: records.length, properties: properties.length, reportedCents },
  };
}
