/**
 * The npm library nach2 as a writer of origination files: the oracle the service's own writer
 * (lib/ach/nacha.ts buildNachaFile) is held to, byte for byte. This is how the service wrote its
 * files before; nach2 takes about 28 ms a thousand entries, twenty times the service's writer.
 */
import {
  COMPANY_NAME_LENGTH,
  ENTRY_DESCRIPTION_LENGTH,
  HEADER_NAME_LENGTH,
  INDIVIDUAL_NAME_LENGTH,
  type NachaEntry,
  type NachaFileModel,
  transliterate,
} from "../lib/ach/nacha.ts";
import {
  entryHashOf,
  isCreditCode,
  SERVICE_CLASS_CREDITS,
  SERVICE_CLASS_DEBITS,
  SERVICE_CLASS_MIXED,
  yymmddOf,
} from "../lib/ach/nacha_records.ts";

/** What nach2 0.5.1 exposes that the builder uses (it ships no types). */
interface Nach2Record {
  set(field: string, value: unknown): void;
}
interface Nach2Batch extends Nach2Record {
  readonly _entries: unknown[];
}
interface Nach2File extends Nach2Record {
  addBatch(batch: Nach2Batch): void;
  generateFile(done: (text: string) => void): void;
}
interface Nach2 {
  readonly File: new (options: Record<string, unknown>) => Nach2File;
  readonly Batch: new (options: Record<string, unknown>) => Nach2Batch;
  readonly Entry: new (options: Record<string, unknown>) => Nach2Record;
}

/** Dollars as nach2 wants them, written from integer cents (it formats through toFixed(2)). */
function dollarsOf(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}

/** Credits only, debits only, or both: the batch's service class. */
function serviceClassOf(entries: readonly NachaEntry[]): number {
  const credits = entries.some((entry) => isCreditCode(entry.transactionCode));
  const debits = entries.some((entry) => !isCreditCode(entry.transactionCode));
  if (credits && debits) return SERVICE_CLASS_MIXED;
  return credits ? SERVICE_CLASS_CREDITS : SERVICE_CLASS_DEBITS;
}

export async function buildWithNach2(model: NachaFileModel): Promise<string> {
  // Loaded at the first file, not at every start of the service.
  const nach = (await import("nach2")).default as Nach2;
  const file = new nach.File({
    immediateDestination: model.immediateDestination,
    // nach2 types the immediate origin and company identification numeric; NACHA lets them hold
    // any 10 characters, so a digit placeholder passes its check and the real value is set after.
    immediateOrigin: "0000000000",
    immediateDestinationName: transliterate(model.immediateDestinationName, HEADER_NAME_LENGTH) ||
      " ",
    immediateOriginName: transliterate(model.immediateOriginName, HEADER_NAME_LENGTH) || " ",
    fileCreationDate: yymmddOf(model.createdDate),
    fileCreationTime: model.createdTime,
    fileIdModifier: model.fileIdModifier,
    referenceCode: " ",
    batchSequenceNumber: 1,
  });
  file.set("immediateOrigin", model.immediateOrigin);
  for (const modelBatch of model.batches) {
    const [year, month, day] = yymmddOf(modelBatch.effectiveDate).match(/../g)!.map(Number);
    const batch = new nach.Batch({
      serviceClassCode: String(serviceClassOf(modelBatch.entries)),
      companyName: transliterate(model.companyName, COMPANY_NAME_LENGTH),
      companyIdentification: "0000000000",
      standardEntryClassCode: modelBatch.entryClass,
      companyEntryDescription: transliterate(
        modelBatch.companyEntryDescription,
        ENTRY_DESCRIPTION_LENGTH,
      ),
      companyDescriptiveDate: " ",
      // nach2 writes the date with the process's local getters: a local date reads back exactly.
      effectiveEntryDate: new Date(2000 + year, month - 1, day),
      originatingDFI: model.odfi,
    });
    batch.set("companyIdentification", model.companyIdentification);
    let hashSum = 0;
    let creditCents = 0;
    let debitCents = 0;
    // NACHA wants traces ascending within a batch; the order of a batch's entries means nothing.
    const entries = [...modelBatch.entries].sort((a, b) =>
      a.traceNumber.localeCompare(b.traceNumber)
    );
    for (const entry of entries) {
      const record = new nach.Entry({
        transactionCode: String(entry.transactionCode),
        receivingDFI: entry.routingNumber,
        DFIAccount: entry.accountNumber,
        // nach2 measures the amount as the text of a float ("10000000.00" is 11 characters), so
        // it refuses $10,000,000.00 and up: it checks a cent, and the real amount is set after.
        amount: "0.01",
        idNumber: entry.individualId || " ",
        individualName: transliterate(entry.name, INDIVIDUAL_NAME_LENGTH),
        discretionaryData: " ",
        traceNumber: entry.traceNumber,
      });
      record.set("amount", dollarsOf(entry.amountCents));
      // Batch.addEntry re-adds every earlier entry on each call (7 s for 10,000 entries), and in
      // floating point: the entries go in directly and the control is set from integer cents.
      batch._entries.push(record);
      hashSum += Number(entry.routingNumber.slice(0, 8));
      if (isCreditCode(entry.transactionCode)) creditCents += entry.amountCents;
      else debitCents += entry.amountCents;
    }
    batch.set("addendaCount", modelBatch.entries.length);
    batch.set("entryHash", entryHashOf(hashSum));
    batch.set("totalCredit", creditCents / 100);
    batch.set("totalDebit", debitCents / 100);
    file.addBatch(batch);
  }
  return await new Promise<string>((resolve) => file.generateFile(resolve)) + "\r\n";
}
