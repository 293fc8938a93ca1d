/**
 * One vocabulary for bank files and provider batches on every console page, in the words the
 * CLI's own commands use (`ach:files`, `checks:files` "positive-pay and print files", PayPal
 * batches): what a file of each rail is called, and each of its states.
 */

const FILE_NAMES: Readonly<Record<string, string>> = {
  ach: "ACH file",
  check_positive_pay: "positive-pay file",
  check_print: "print file",
  paypal: "PayPal batch",
};

/** What a file or batch of this rail is called. */
export const fileName = (rail: string): string => FILE_NAMES[rail] ?? `${rail} batch`;

/** A check file's kind (`positive_pay`, `print`) in the same words. */
export const checkFileKindName = (kind: string): string => fileName(`check_${kind}`);

const FILE_STATES: Readonly<Record<string, string>> = {
  built: "built",
  transmitting: "transmitting",
  transmitted: "transmitted",
  in_doubt: "in doubt",
  voided: "voided",
};

/** A file's or batch's state, as every page says it. */
export const fileState = (status: string): string => FILE_STATES[status] ?? status;
