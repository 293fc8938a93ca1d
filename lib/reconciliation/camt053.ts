/**
 * A strict reader of ISO 20022 camt.053 bank-to-customer statements (any version from .001.02),
 * pure, on fast-xml-parser. Each `Stmt` is one account's day: its booked entries (`Ntry`), its
 * opening (`OPBD`) and closing (`CLBD`) booked balances, and its transaction summary. Checked: the
 * XML is well formed; amounts are USD with at most two decimals; the summary's counts and sums
 * (when given) equal the entries'; the opening balance plus credits less debits is the closing
 * balance. The first fault refuses the whole file with its line and reason.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import {
  type BankStatement,
  decimalCents,
  kindOfBaiTypeCode,
  STATEMENT_ACCOUNTS_MAX,
  STATEMENT_LINES_MAX,
  type StatementAccount,
  type StatementLine,
  type StatementLineKind,
  type StatementRead,
} from "./statement.ts";

// deno-lint-ignore no-explicit-any
type Node = any;

class Malformed extends Error {
  constructor(readonly line: number, reason: string) {
    super(reason);
  }
}

const REPEATED = new Set(["Stmt", "Ntry", "Bal", "NtryDtls", "TxDtls", "Ustrd", "AddtlNtryInf"]);

/** The lines each occurrence of an element starts on, in document order (any namespace prefix). */
function linesOf(text: string, element: string): number[] {
  const lines: number[] = [];
  const pattern = new RegExp(`<(?:[A-Za-z_][\\w.-]*:)?${element}[\\s>/]`, "g");
  let line = 1;
  let from = 0;
  for (const match of text.matchAll(pattern)) {
    for (let i = from; i < match.index!; i++) if (text.charCodeAt(i) === 10) line++;
    from = match.index!;
    lines.push(line);
  }
  return lines;
}

const textOf = (node: Node): string | null => {
  if (node === undefined || node === null) return null;
  if (typeof node === "string") return node.trim();
  if (typeof node === "object" && typeof node["#text"] === "string") return node["#text"].trim();
  return null;
};

/** An `Amt`-like element: USD, positive, at most two decimals. */
function money(node: Node, line: number, what: string): number {
  const value = textOf(node);
  const ccy = typeof node === "object" ? node["@_Ccy"] : undefined;
  if (ccy !== "USD") {
    throw new Malformed(
      line,
      `${what} currency ${JSON.stringify(ccy ?? "")}: only USD statements are read`,
    );
  }
  const cents = value === null ? null : decimalCents(value);
  if (cents === null) {
    throw new Malformed(
      line,
      `${what} ${JSON.stringify(value ?? "")}: a positive amount with at most two decimals`,
    );
  }
  return cents;
}

function direction(node: Node, line: number, what: string): "credit" | "debit" {
  const value = textOf(node);
  if (value === "CRDT") return "credit";
  if (value === "DBIT") return "debit";
  throw new Malformed(line, `${what} CdtDbtInd ${JSON.stringify(value ?? "")}: CRDT or DBIT`);
}

function isoDate(node: Node, line: number, what: string): string {
  const value = textOf(node?.Dt) ?? textOf(node?.DtTm)?.slice(0, 10) ?? null;
  if (value === null || !/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new Malformed(line, `${what} ${JSON.stringify(value ?? "")}: a date YYYY-MM-DD`);
  }
  return value;
}

/** The bank transaction code's kind: a BAI code in `Prtry`, else the ISO family and sub-family. */
function kindOf(code: Node): { typeCode: string; kind: StatementLineKind } {
  const proprietary = textOf(code?.Prtry?.Cd);
  if (proprietary !== null && /^\d{3}$/.test(proprietary)) {
    return { typeCode: proprietary, kind: kindOfBaiTypeCode(Number(proprietary)) };
  }
  const domain = textOf(code?.Domn?.Cd) ?? "";
  const family = textOf(code?.Domn?.Fmly?.Cd) ?? "";
  const sub = textOf(code?.Domn?.Fmly?.SubFmlyCd) ?? "";
  const typeCode = [domain, family, sub].filter((part) => part !== "").join("/") ||
    (proprietary ?? "");
  if (["ARET", "RRTN", "UPDD"].includes(sub)) return { typeCode, kind: "ach_return" };
  if (["ACDT", "ADBT", "ASET", "PMDD", "BBDD"].includes(sub)) return { typeCode, kind: "ach" };
  if (family === "ICHQ" || family === "CCHQ") return { typeCode, kind: "check_paid" };
  if (["DMCT", "XBCT", "FICT", "PRCT"].includes(sub)) return { typeCode, kind: "wire" };
  return { typeCode, kind: "other" };
}

function entry(node: Node, line: number): StatementLine & { booked: boolean } {
  const amountCents = money(node.Amt, line, "Ntry Amt");
  if (amountCents === 0) throw new Malformed(line, "Ntry Amt 0: an entry moves money");
  const status = textOf(node.Sts?.Cd) ?? textOf(node.Sts);
  if (status === null) throw new Malformed(line, "Ntry has no Sts (BOOK, PDNG or INFO)");
  const details = node.NtryDtls?.[0]?.TxDtls?.[0];
  const refs = details?.Refs;
  const checkNumber = textOf(refs?.ChqNb);
  const remittance = details?.RmtInf?.Ustrd?.map(textOf).join(" ") ?? "";
  const info = node.AddtlNtryInf?.map(textOf).join(" ") ?? "";
  return {
    line,
    direction: direction(node.CdtDbtInd, line, "Ntry"),
    amountCents,
    ...kindOf(node.BkTxCd),
    bankReference: textOf(node.AcctSvcrRef) ?? textOf(refs?.AcctSvcrRef),
    customerReference: checkNumber ?? textOf(refs?.EndToEndId) ?? textOf(refs?.InstrId),
    text: [info, remittance].filter((part) => part !== "").join(" "),
    booked: status === "BOOK",
  };
}

function balance(
  balances: Node[],
  code: string,
  line: number,
): { cents: number | null; date: string | null } {
  const found = balances.find((bal) => textOf(bal?.Tp?.CdOrPrtry?.Cd) === code);
  if (!found) return { cents: null, date: null };
  const cents = money(found.Amt, line, `${code} balance`);
  const signed = direction(found.CdtDbtInd, line, `${code} balance`) === "credit" ? cents : -cents;
  return { cents: signed, date: isoDate(found.Dt, line, `${code} balance Dt`) };
}

function summaryCheck(summary: Node, what: string, lines: StatementLine[], line: number): void {
  if (!summary) return;
  const stated = textOf(summary.NbOfNtries);
  if (stated !== null && Number(stated) !== lines.length) {
    throw new Malformed(line, `${what} NbOfNtries is ${stated}, the statement has ${lines.length}`);
  }
  const sum = textOf(summary.Sum);
  const total = lines.reduce((acc, l) => acc + l.amountCents, 0);
  if (sum !== null && decimalCents(sum) !== total) {
    throw new Malformed(
      line,
      `${what} Sum is ${sum}, the entries add up to ${(total / 100).toFixed(2)}`,
    );
  }
}

/** Reads a camt.053 file; the first fault refuses it whole with its line and reason. */
export function readCamt053(text: string): StatementRead {
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    return {
      ok: false,
      problem: { line: valid.err.line, reason: `not well-formed XML: ${valid.err.msg}` },
    };
  }
  try {
    return { ok: true, statement: readDocument(text) };
  } catch (error) {
    if (error instanceof Malformed) {
      return { ok: false, problem: { line: error.line, reason: error.message } };
    }
    throw error;
  }
}

function readDocument(text: string): BankStatement {
  const parsed = new XMLParser({
    ignoreAttributes: false,
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    processEntities: true,
    isArray: (name) => REPEATED.has(name),
  }).parse(text);
  const root = parsed?.Document?.BkToCstmrStmt;
  if (!root) throw new Malformed(1, "not a camt.053 document: no Document/BkToCstmrStmt");
  const messageId = textOf(root.GrpHdr?.MsgId);
  if (messageId === null || messageId === "") {
    throw new Malformed(linesOf(text, "GrpHdr")[0] ?? 1, "GrpHdr has no MsgId");
  }
  const statements: Node[] = root.Stmt ?? [];
  const stmtLines = linesOf(text, "Stmt");
  const entryLines = linesOf(text, "Ntry");
  if (statements.length === 0) throw new Malformed(1, "the document holds no Stmt");
  if (statements.length > STATEMENT_ACCOUNTS_MAX) {
    throw new Malformed(
      stmtLines[STATEMENT_ACCOUNTS_MAX],
      `a statement holds at most ${STATEMENT_ACCOUNTS_MAX} accounts`,
    );
  }
  const accounts: StatementAccount[] = [];
  let entryIndex = 0;
  statements.forEach((stmt, index) => {
    const line = stmtLines[index] ?? 1;
    const accountNumber = textOf(stmt.Acct?.Id?.Othr?.Id) ?? textOf(stmt.Acct?.Id?.IBAN);
    if (accountNumber === null || !/^[A-Za-z0-9-]{1,34}$/.test(accountNumber)) {
      throw new Malformed(
        line,
        `Stmt Acct Id ${JSON.stringify(accountNumber ?? "")}: 1 to 34 letters or digits`,
      );
    }
    const ccy = textOf(stmt.Acct?.Ccy);
    if (ccy !== null && ccy !== "USD") {
      throw new Malformed(
        line,
        `Stmt Acct Ccy ${JSON.stringify(ccy)}: only USD statements are read`,
      );
    }
    const balances: Node[] = stmt.Bal ?? [];
    const opening = balance(balances, "OPBD", line);
    const closing = balance(balances, "CLBD", line);
    const lines: StatementLine[] = [];
    for (const node of (stmt.Ntry ?? []) as Node[]) {
      const read = entry(node, entryLines[entryIndex++] ?? line);
      // Pending and information-only entries are not yet the bank's books.
      if (!read.booked) continue;
      const { booked: _booked, ...kept } = read;
      lines.push(kept);
      if (entryIndex > STATEMENT_LINES_MAX) {
        throw new Malformed(read.line, `a statement holds at most ${STATEMENT_LINES_MAX} entries`);
      }
    }
    const summary = stmt.TxsSummry;
    summaryCheck(summary?.TtlNtries, "TxsSummry TtlNtries", lines, line);
    summaryCheck(
      summary?.TtlCdtNtries,
      "TxsSummry TtlCdtNtries",
      lines.filter((l) => l.direction === "credit"),
      line,
    );
    summaryCheck(
      summary?.TtlDbtNtries,
      "TxsSummry TtlDbtNtries",
      lines.filter((l) => l.direction === "debit"),
      line,
    );
    const net = lines.reduce(
      (acc, l) => acc + (l.direction === "credit" ? l.amountCents : -l.amountCents),
      0,
    );
    if (opening.cents !== null && closing.cents !== null && opening.cents + net !== closing.cents) {
      throw new Malformed(
        line,
        `the opening balance ${opening.cents} plus the entries' net ${net} is ${
          opening.cents + net
        }, not the closing balance ${closing.cents}`,
      );
    }
    const day = closing.date ?? textOf(stmt.FrToDt?.ToDtTm)?.slice(0, 10) ??
      textOf(stmt.CreDtTm)?.slice(0, 10) ?? null;
    if (day === null || !/^\d{4}-\d{2}-\d{2}$/.test(day)) {
      throw new Malformed(line, "Stmt gives no day: a CLBD balance date, FrToDt or CreDtTm");
    }
    accounts.push({
      line,
      accountNumber,
      date: day,
      openingCents: opening.cents,
      closingCents: closing.cents,
      lines,
    });
  });
  return {
    format: "camt.053",
    senderId: textOf(root.GrpHdr?.MsgRcpt?.Nm) ?? "",
    fileId: messageId,
    accounts,
  };
}
