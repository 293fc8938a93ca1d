/**
 * A strict reader of BAI2 prior-day statements (Cash Management Balance Reporting Specifications,
 * version 2), pure. Records: 01 file header, 02 group header, 03 account identifier and summary,
 * 16 transaction detail, 88 continuation, 49 account trailer, 98 group trailer, 99 file trailer.
 *
 * Nothing is guessed: every record count, control total and account total is checked, each record
 * but a 16 ends with `/`, and the first fault refuses the whole file with its line and reason.
 * An 88 continues the record before it (its fields follow that record's, after its `/`); a 16's
 * text runs to the end of the record, continuations included, joined by commas.
 */
import {
  baiDetailDirection,
  type BankStatement,
  kindOfBaiTypeCode,
  signedCents,
  STATEMENT_ACCOUNTS_MAX,
  STATEMENT_LINES_MAX,
  type StatementAccount,
  type StatementLine,
  type StatementRead,
} from "./statement.ts";

/** The BAI2 type codes of the opening and closing ledger balances of an 03 record. */
export const BAI_OPENING_LEDGER = 10;
export const BAI_CLOSING_LEDGER = 15;

/** One logical record: its code, the line it starts on, its fields, and its physical records. */
interface LogicalRecord {
  readonly code: string;
  readonly line: number;
  body: string;
  physicalRecords: number;
}

class Malformed extends Error {
  constructor(readonly line: number, reason: string) {
    super(reason);
  }
}

const RECORD_CODES = new Set(["01", "02", "03", "16", "88", "49", "98", "99"]);

/** Joins 88 continuations to the records they continue; the file's physical lines, trimmed. */
function logicalRecords(text: string): LogicalRecord[] {
  const physical = text.split(/\r?\n/);
  // One line break after the last record is the file's end, not an empty record.
  if (physical.length > 1 && physical[physical.length - 1] === "") physical.pop();
  const records: LogicalRecord[] = [];
  physical.forEach((raw, index) => {
    const line = index + 1;
    // Fixed-length senders pad records with spaces after their end.
    const content = raw.replace(/ +$/, "");
    const code = content.slice(0, 2);
    if (!RECORD_CODES.has(code) || (content.length > 2 && content[2] !== ",")) {
      throw new Malformed(
        line,
        `record code ${
          JSON.stringify(content.slice(0, 2))
        }: one of 01, 02, 03, 16, 88, 49, 98, 99 followed by a comma`,
      );
    }
    const body = content.slice(3);
    if (code === "88") {
      const previous = records[records.length - 1];
      if (!previous || previous.code === "99") {
        throw new Malformed(line, "an 88 continuation follows no record it could continue");
      }
      previous.body = `${previous.body.replace(/\/$/, "")},${body}`;
      previous.physicalRecords++;
      return;
    }
    records.push({ code, line, body, physicalRecords: 1 });
  });
  return records;
}

/** The fields of a record that must end with `/`. */
function slashFields(record: LogicalRecord): string[] {
  if (!record.body.endsWith("/")) {
    throw new Malformed(record.line, `record ${record.code} does not end with "/"`);
  }
  return record.body.slice(0, -1).split(",");
}

function date(record: LogicalRecord, field: string, value: string | undefined): string {
  const match = /^(\d{2})(\d{2})(\d{2})$/.exec(value ?? "");
  const iso = match ? `20${match[1]}-${match[2]}-${match[3]}` : "";
  if (
    !match || Number.isNaN(Date.parse(`${iso}T00:00:00Z`)) ||
    new Date(`${iso}T00:00:00Z`).toISOString().slice(0, 10) !== iso
  ) {
    throw new Malformed(record.line, `${field} ${JSON.stringify(value ?? "")}: a date YYMMDD`);
  }
  return iso;
}

function count(record: LogicalRecord, field: string, value: string | undefined): number {
  if (!/^\d{1,9}$/.test(value ?? "")) {
    throw new Malformed(record.line, `${field} ${JSON.stringify(value ?? "")}: a whole number`);
  }
  return Number(value);
}

function amount(record: LogicalRecord, field: string, value: string | undefined): number {
  const cents = signedCents(value ?? "");
  if (cents === null) {
    throw new Malformed(
      record.line,
      `${field} ${JSON.stringify(value ?? "")}: cents as digits, with an optional sign`,
    );
  }
  return cents;
}

function currency(record: LogicalRecord, value: string | undefined, fallback: string): string {
  const code = value === undefined || value === "" ? fallback : value;
  if (code !== "USD") {
    throw new Malformed(
      record.line,
      `currency ${JSON.stringify(code)}: only USD statements are read`,
    );
  }
  return code;
}

/** Skips a funds type and its own fields (V: date and time; S: 3 amounts; D: n pairs). */
function skipFundsType(record: LogicalRecord, fields: string[], at: number): number {
  const fundsType = fields[at] ?? "";
  if (["", "0", "1", "2", "Z"].includes(fundsType)) return at + 1;
  if (fundsType === "V") {
    date(record, "value date", fields[at + 1]);
    return at + 3;
  }
  if (fundsType === "S") {
    for (let i = 1; i <= 3; i++) amount(record, "funds availability amount", fields[at + i]);
    return at + 4;
  }
  if (fundsType === "D") {
    const pairs = count(record, "distribution count", fields[at + 1]);
    for (let i = 0; i < pairs; i++) {
      count(record, "distribution days", fields[at + 2 + i * 2]);
      amount(record, "distribution amount", fields[at + 3 + i * 2]);
    }
    return at + 2 + pairs * 2;
  }
  throw new Malformed(
    record.line,
    `funds type ${JSON.stringify(fundsType)}: 0, 1, 2, Z, V, S or D`,
  );
}

function typeCode(record: LogicalRecord, value: string | undefined): number {
  if (!/^\d{3}$/.test(value ?? "")) {
    throw new Malformed(record.line, `type code ${JSON.stringify(value ?? "")}: three digits`);
  }
  return Number(value);
}

interface AccountUnderway {
  readonly line: number;
  readonly accountNumber: string;
  readonly openingCents: number | null;
  readonly closingCents: number | null;
  readonly lines: StatementLine[];
  controlCents: number;
  physicalRecords: number;
}

function openAccount(record: LogicalRecord, groupCurrency: string): AccountUnderway {
  const fields = slashFields(record);
  const accountNumber = fields[0] ?? "";
  if (!/^[A-Za-z0-9-]{1,34}$/.test(accountNumber)) {
    throw new Malformed(
      record.line,
      `account number ${JSON.stringify(accountNumber)}: 1 to 34 letters or digits`,
    );
  }
  currency(record, fields[1], groupCurrency);
  let controlCents = 0;
  let openingCents: number | null = null;
  let closingCents: number | null = null;
  let at = 2;
  while (at < fields.length) {
    // A trailing empty field before the slash closes the list.
    if (fields[at] === "" && at === fields.length - 1) break;
    const code = typeCode(record, fields[at]);
    const value = fields[at + 1] ?? "";
    if (value !== "") {
      const cents = amount(record, `amount of type ${fields[at]}`, value);
      controlCents += cents;
      if (code === BAI_OPENING_LEDGER) openingCents = cents;
      if (code === BAI_CLOSING_LEDGER) closingCents = cents;
    }
    const items = fields[at + 2] ?? "";
    if (items !== "") count(record, `item count of type ${fields[at]}`, items);
    at = skipFundsType(record, fields, at + 3);
  }
  return {
    line: record.line,
    accountNumber,
    openingCents,
    closingCents,
    lines: [],
    controlCents,
    physicalRecords: record.physicalRecords,
  };
}

function detail(record: LogicalRecord): StatementLine {
  // A 16's text runs to the record's end; a slash there ends the record, it is no text.
  const fields = record.body.replace(/\/$/, "").split(",");
  const code = typeCode(record, fields[0]);
  const direction = baiDetailDirection(code);
  if (direction === null) {
    throw new Malformed(
      record.line,
      `type code ${fields[0]} is a balance or summary code, not a transaction`,
    );
  }
  if (!/^\d{1,15}$/.test(fields[1] ?? "")) {
    throw new Malformed(
      record.line,
      `amount ${JSON.stringify(fields[1] ?? "")}: cents as unsigned digits`,
    );
  }
  const amountCents = Number(fields[1]);
  if (amountCents === 0) throw new Malformed(record.line, "amount 0: a transaction moves money");
  const at = skipFundsType(record, fields, 2);
  if (fields.length < at + 2) {
    throw new Malformed(
      record.line,
      "a 16 record needs a bank reference and a customer reference field",
    );
  }
  const textField = fields.slice(at + 2).join(",").trim();
  return {
    line: record.line,
    direction,
    amountCents,
    typeCode: fields[0],
    kind: kindOfBaiTypeCode(code),
    bankReference: fields[at] === "" ? null : fields[at],
    customerReference: fields[at + 1] === "" ? null : fields[at + 1],
    text: textField,
  };
}

/**
 * A trailer (49, 98, 99): its fields in order, each what its records add up to. The control total
 * is an amount with its sign; the counts are whole numbers.
 */
function checkTrailer(
  trailer: LogicalRecord,
  owner: "account" | "group" | "file",
  computed: readonly (readonly [field: string, value: number])[],
): void {
  const fields = slashFields(trailer);
  computed.forEach(([field, value], i) => {
    const stated = field === "control total"
      ? amount(trailer, `${owner} control total`, fields[i])
      : count(trailer, field, fields[i]);
    if (stated !== value) {
      const what = field === "control total" ? `the ${owner} ${field}` : `the ${owner}'s ${field}`;
      throw new Malformed(trailer.line, `${what} is ${stated}, the records add up to ${value}`);
    }
  });
}

/** Reads a BAI2 file; the first fault refuses it whole with its line and reason. */
export function readBai2(text: string): StatementRead {
  try {
    return { ok: true, statement: readRecords(logicalRecords(text)) };
  } catch (error) {
    if (error instanceof Malformed) {
      return { ok: false, problem: { line: error.line, reason: error.message } };
    }
    throw error;
  }
}

function readRecords(records: LogicalRecord[]): BankStatement {
  const header = records[0];
  if (!header || header.code !== "01") {
    throw new Malformed(header?.line ?? 1, "a BAI2 file starts with an 01 file header");
  }
  const fileFields = slashFields(header);
  const senderId = fileFields[0] ?? "";
  if (senderId === "") throw new Malformed(header.line, "sender identification is empty");
  date(header, "file creation date", fileFields[2]);
  const fileId = fileFields[4] ?? "";
  if (fileId === "") throw new Malformed(header.line, "file identification number is empty");
  if (fileFields[7] !== "2") {
    throw new Malformed(header.line, `version ${JSON.stringify(fileFields[7] ?? "")}: 2 (BAI2)`);
  }
  const accounts: StatementAccount[] = [];
  let lineCount = 0;
  let filePhysical = header.physicalRecords;
  let fileControl = 0;
  let groups = 0;
  let at = 1;
  for (;;) {
    const record = records[at];
    if (!record) {
      throw new Malformed(records[at - 1].line, "the file ends without its 99 file trailer");
    }
    if (record.code === "99") break;
    if (record.code !== "02") {
      throw new Malformed(
        record.line,
        `record ${record.code} where a 02 group header or the 99 file trailer belongs`,
      );
    }
    const groupFields = slashFields(record);
    if (groupFields[2] !== "1") {
      throw new Malformed(
        record.line,
        `group status ${
          JSON.stringify(groupFields[2] ?? "")
        }: only 1 (update) is read; a deletion, correction or test group needs the bank's restated file`,
      );
    }
    const asOf = date(record, "as-of date", groupFields[3]);
    const groupCurrency = currency(record, groupFields[5], "USD");
    let groupPhysical = record.physicalRecords;
    let groupControl = 0;
    let groupAccounts = 0;
    at++;
    for (;;) {
      const opening = records[at];
      if (!opening) {
        throw new Malformed(records[at - 1].line, "the group ends without its 98 group trailer");
      }
      if (opening.code === "98") break;
      if (opening.code !== "03") {
        throw new Malformed(
          opening.line,
          `record ${opening.code} where an 03 account or the 98 group trailer belongs`,
        );
      }
      const account = openAccount(opening, groupCurrency);
      at++;
      for (;;) {
        const inner = records[at];
        if (!inner) {
          throw new Malformed(
            records[at - 1].line,
            "the account ends without its 49 account trailer",
          );
        }
        if (inner.code === "49") {
          account.physicalRecords += inner.physicalRecords;
          checkTrailer(inner, "account", [
            ["control total", account.controlCents],
            ["number of records", account.physicalRecords],
          ]);
          break;
        }
        if (inner.code !== "16") {
          throw new Malformed(
            inner.line,
            `record ${inner.code} where a 16 detail or the 49 account trailer belongs`,
          );
        }
        const line = detail(inner);
        account.lines.push(line);
        account.controlCents += line.amountCents;
        account.physicalRecords += inner.physicalRecords;
        if (++lineCount > STATEMENT_LINES_MAX) {
          throw new Malformed(
            inner.line,
            `a statement holds at most ${STATEMENT_LINES_MAX} transactions`,
          );
        }
        at++;
      }
      const net = account.lines.reduce(
        (sum, l) => sum + (l.direction === "credit" ? l.amountCents : -l.amountCents),
        0,
      );
      if (
        account.openingCents !== null && account.closingCents !== null &&
        account.openingCents + net !== account.closingCents
      ) {
        throw new Malformed(
          opening.line,
          `the opening ledger ${account.openingCents} plus the details' net ${net} is ${
            account.openingCents + net
          }, not the closing ledger ${account.closingCents}`,
        );
      }
      accounts.push({
        line: account.line,
        accountNumber: account.accountNumber,
        date: asOf,
        openingCents: account.openingCents,
        closingCents: account.closingCents,
        lines: account.lines,
      });
      if (accounts.length > STATEMENT_ACCOUNTS_MAX) {
        throw new Malformed(
          opening.line,
          `a statement holds at most ${STATEMENT_ACCOUNTS_MAX} accounts`,
        );
      }
      groupControl += account.controlCents;
      groupPhysical += account.physicalRecords;
      groupAccounts++;
      at++;
    }
    const trailer = records[at];
    groupPhysical += trailer.physicalRecords;
    checkTrailer(trailer, "group", [
      ["control total", groupControl],
      ["number of accounts", groupAccounts],
      ["number of records", groupPhysical],
    ]);
    fileControl += groupControl;
    filePhysical += groupPhysical;
    groups++;
    at++;
  }
  const trailer = records[at];
  filePhysical += trailer.physicalRecords;
  checkTrailer(trailer, "file", [
    ["control total", fileControl],
    ["number of groups", groups],
    ["number of records", filePhysical],
  ]);
  if (records[at + 1]) {
    throw new Malformed(records[at + 1].line, "a record follows the 99 file trailer");
  }
  if (groups === 0) throw new Malformed(trailer.line, "the file holds no group");
  return { format: "bai2", senderId, fileId, accounts };
}
