/** Which reader a statement file takes: BAI2 starts with its 01 header, camt.053 is XML. */
import { readBai2 } from "./bai2.ts";
import { readCamt053 } from "./camt053.ts";
import type { StatementRead } from "./statement.ts";

/** Reads a BAI2 or camt.053 statement file, refusing anything else at line 1. */
export function readStatementFile(content: Uint8Array): StatementRead {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(content);
  } catch {
    return { ok: false, problem: { line: 1, reason: "the file is not UTF-8 text" } };
  }
  const start = text.replace(/^\uFEFF/, "").trimStart();
  if (start.startsWith("01,")) return readBai2(text.replace(/^\uFEFF/, ""));
  if (start.startsWith("<")) return readCamt053(text.replace(/^\uFEFF/, ""));
  return {
    ok: false,
    problem: {
      line: 1,
      reason: "neither a BAI2 file (it starts with an 01 record) nor a camt.053 document (XML)",
    },
  };
}
