/**
 * Edge validation: a JSON body parsed and checked with a valibot schema, every issue turned into
 * the surface's error with the dotted field path. A validator's raw output is never returned.
 */
import { dateStart } from "../lib/obligations/deadline.ts";
import type { Context } from "hono";
import * as v from "valibot";
import { centsToDollars, formatDollars, parseDollars } from "../lib/platform/money.ts";
import { normalizeUsPhone } from "../lib/portal/method_details.ts";
import { requestText } from "./body_content.ts";
import type { AppEnv } from "./context.ts";
import { errorResponse, type FieldIssue, type FieldLocation } from "./errors.ts";

/** Dotted path of a valibot issue: `payees.0.amount`. */
export function issuePath(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((item) => String(item.key)).join(".");
}

/** Field issues from valibot issues, first issue per field. */
export function fieldIssues(
  issues: readonly v.BaseIssue<unknown>[],
  location: FieldLocation,
  rootName: string,
): FieldIssue[] {
  const seen = new Set<string>();
  const out: FieldIssue[] = [];
  for (const issue of issues) {
    const field = issuePath(issue) || rootName;
    if (seen.has(field)) continue;
    seen.add(field);
    out.push({ field, location, message: issue.message });
  }
  return out;
}

/** The rule every free-text input of both surfaces follows, as its refusals word it. */
const FREE_TEXT_RULE =
  "must not hold control characters (tab aside), bidirectional overrides or lone surrogates";

/**
 * C0 controls but tab, DEL and C1 controls, the bidirectional embeddings, overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069), and surrogates without their pair (no `u` flag, so the regex
 * sees UTF-16 code units). Such text is invisible or misread when echoed into a page, an e-mail, a
 * CSV or a bank file, and a lone surrogate is not even Unicode.
 */
const FORBIDDEN_CHARACTER =
  // deno-lint-ignore no-control-regex -- matching control characters is this rule's purpose
  /[\x00-\x08\x0A-\x1F\x7F-\x9F]|[\u202A-\u202E\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The first character free text must not hold, described for a refusal ("U+0000 (a control
 * character) at character 4", counted in code points from 1), or null when the text is clean.
 */
export function forbiddenCharacter(text: string): string | null {
  const found = FORBIDDEN_CHARACTER.exec(text);
  if (!found) return null;
  const unit = found[0].charCodeAt(0);
  const kind = unit >= 0xd800 && unit <= 0xdfff
    ? "a lone surrogate"
    : unit >= 0x2000
    ? "a bidirectional override"
    : "a control character";
  const codePoint = `U+${unit.toString(16).toUpperCase().padStart(4, "0")}`;
  const position = [...text.slice(0, found.index)].length + 1;
  return `${codePoint} (${kind}) at character ${position}`;
}

/** A check that the string holds no forbidden character; the refusal names the field. */
export function cleanText(name: string) {
  return v.check<string, (issue: v.CheckIssue<string>) => string>(
    (text) => !FORBIDDEN_CHARACTER.test(text),
    (issue) => `${name} ${FREE_TEXT_RULE}: ${forbiddenCharacter(issue.input as string)}`,
  );
}

/** A free-text string of both surfaces: a string, at most `lengthMax` long, of clean text. */
export function freeText(name: string, lengthMax: number) {
  return v.pipe(
    v.string(`${name} must be a string`),
    v.maxLength(lengthMax, `${name} is at most ${lengthMax} characters`),
    cleanText(name),
  );
}

/**
 * An optional string the seed types only as "string": absent, null and blank ("" or spaces) all
 * mean absent (null), so a caller that sends "" for a channel or field it does not use is not
 * refused; anything else must pass `schema`. Where the field IS needed, the rule that needs it
 * refuses the null and names the field.
 */
export function blankAsAbsent<S extends v.GenericSchema<string, unknown>>(name: string, schema: S) {
  return v.optional(
    v.nullable(
      v.pipe(
        v.string(`${name} must be a string`),
        v.rawTransform(({ dataset, addIssue, NEVER }): v.InferOutput<S> | null => {
          if (dataset.value.trim() === "") return null;
          const parsed = v.safeParse(schema, dataset.value);
          if (parsed.success) return parsed.output;
          for (const issue of parsed.issues) addIssue({ message: issue.message });
          return NEVER;
        }),
        v.description(`${v.getDescription(schema) ?? ""} Blank ("") means absent.`.trim()),
      ),
    ),
    null,
  );
}

const PHONE_TEXT = /^\+?[\d\s().-]+$/;
/** E.164 outside the NANP: a country code not starting with 0, 7 to 15 digits in all. */
const INTERNATIONAL_DIGITS = /^[1-9]\d{6,14}$/;

/**
 * A phone number as people write it, in E.164 (+15125550100), or null when it is not one: digits
 * with the usual separators (spaces, dots, hyphens, parentheses); without a country code it is a
 * US number (NANP: ten digits, optionally after 1); + and another country code is kept as given.
 */
export function normalizePhone(text: string): string | null {
  const trimmed = text.trim();
  if (!PHONE_TEXT.test(trimmed)) return null;
  if (trimmed.startsWith("+") && !/^\+\s*1/.test(trimmed)) {
    const digits = trimmed.slice(1).replace(/\D/g, "");
    return INTERNATIONAL_DIGITS.test(digits) ? `+${digits}` : null;
  }
  return normalizeUsPhone(trimmed);
}

/** A phone number field: any usual format, stored in E.164. */
export function phoneNumber(name: string) {
  return v.pipe(
    v.string(`${name} must be a string`),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const e164 = normalizePhone(dataset.value);
      if (e164) return e164;
      addIssue({
        message:
          `${name} must be a phone number: 10 digits such as (512) 555-0100, or + and a country code`,
      });
      return NEVER;
    }),
    v.description(
      "A phone number in any usual format: (512) 555-0100, 512-555-0100, +1 512 555 0100, +44 20 7946 0958. " +
        "Stored and returned in E.164 (+15125550100); without a country code it is a US number.",
    ),
  );
}

/** A real calendar date written YYYY-MM-DD (2026-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  const ms = Date.parse(`${value}T00:00:00Z`);
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(ms) &&
    new Date(ms).toISOString().startsWith(value);
}

/**
 * A pay_by date (extension, both surfaces): a calendar date YYYY-MM-DD. Whether it is after today
 * is the service's rule (it knows the sandbox clock).
 */
export function payByDate(name: string) {
  return v.pipe(
    v.string(`${name} must be a string`),
    v.check((text) => dateStart(text) !== null, `${name} must be a date YYYY-MM-DD`),
    v.description(
      "Extension: the date this payment must be paid by (prompt-payment rules). Absent, the company's default applies (new companies: 30 days after create). A payee who has not chosen by then gets the company's offer-expiry action at 00:00 UTC that day: by default a check mailed to the address on file.",
    ),
  );
}

/** A two-letter state code; lowercase is accepted and stored uppercase. */
export function stateCode(name: string) {
  return v.pipe(
    v.string(`${name} must be a string`),
    v.trim(),
    v.toUpperCase(),
    v.regex(/^[A-Z]{2}$/, `${name} is a two-letter code such as TX`),
    v.description("A two-letter state code such as TX; lowercase is stored uppercase."),
  );
}

/** A US ZIP code, five digits or ZIP+4. */
export function zipCode(name: string) {
  return v.pipe(
    v.string(`${name} must be a string`),
    v.trim(),
    v.regex(/^\d{5}(-\d{4})?$/, `${name} is a US ZIP code`),
    v.description("A US ZIP code: 12345 or 12345-6789."),
  );
}

/** Keys a JSON object may carry that a JavaScript object cannot hold as data. */
const RESERVED_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * An object of strings such as /v1 metadata. A reserved key is refused by name rather than
 * silently dropped (valibot's record skips them), and keys and values are clean text; a key that
 * is not clean is named by its place, since echoing it would echo the character.
 */
export function stringRecord(
  name: string,
  limits: { keysMax: number; keyLengthMax: number; valueLengthMax: number },
) {
  const notAnObject = `${name} must be an object of strings`;
  return v.pipe(
    v.unknown(),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed || !isPlainObject(dataset.value)) return;
      const input = dataset.value;
      Object.keys(input).forEach((key, index) => {
        if (RESERVED_KEYS.has(key)) {
          addIssue({
            message:
              `${name} key ${key} is reserved: __proto__, constructor and prototype cannot be stored`,
            path: [{ type: "object", origin: "key", input, key, value: input[key] }],
          });
          return;
        }
        const found = forbiddenCharacter(key);
        if (found) {
          addIssue({ message: `${name} keys ${FREE_TEXT_RULE}: key ${index + 1} has ${found}` });
        }
      });
    }),
    v.record(
      v.pipe(
        v.string(),
        v.minLength(1, `${name} keys must not be empty`),
        v.maxLength(
          limits.keyLengthMax,
          `${name} keys are at most ${limits.keyLengthMax} characters`,
        ),
      ),
      v.pipe(
        v.string(`${name} values must be strings`),
        v.maxLength(
          limits.valueLengthMax,
          `${name} values are at most ${limits.valueLengthMax} characters`,
        ),
        cleanText(`${name} values`),
      ),
      notAnObject,
    ),
    v.check(
      (record) => Object.keys(record).length <= limits.keysMax,
      `${name} has at most ${limits.keysMax} keys`,
    ),
  );
}

/**
 * A JSON number as the caller wrote it. Bodies are parsed with every number kept as its source
 * text, so an amount becomes cents exactly (`10.005` is refused, not rounded) and an id is not
 * silently truncated.
 */
export class JsonNumber {
  constructor(readonly source: string) {}
}

function keepNumberSource(
  this: unknown,
  _key: string,
  value: unknown,
  context?: { source?: string },
): unknown {
  return typeof value === "number" ? new JsonNumber(context?.source ?? String(value)) : value;
}

const isJsonNumber = (value: unknown): value is JsonNumber => value instanceof JsonNumber;

/** A whole JSON number within bounds; messages name the field. */
export function jsonInteger(name: string, min: number, max: number) {
  return v.pipe(
    v.custom<JsonNumber>(isJsonNumber, `${name} must be a number`),
    v.check((n) => /^-?\d+$/.test(n.source), `${name} must be a whole number`),
    v.transform((n) => Number(n.source)),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
    // The OpenAPI document shows the whole number the check enforces.
    v.metadata({ type: "integer" }),
  );
}

/**
 * A JSON number of dollars, turned into cents from its source text. Its bounds, in dollars, go
 * into the OpenAPI document as the number's minimum and maximum; whole cents are said in words,
 * since a `multipleOf: 0.01` refuses valid amounts in stock validators' float arithmetic.
 */
export function jsonDollars(name: string, bounds: { minCents: number; maxCents: number }) {
  return v.pipe(
    v.custom<JsonNumber>(isJsonNumber, `${name} must be a number`),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const cents = parseDollars(dataset.value.source, bounds);
      if (cents.ok) return cents.value;
      addIssue({ message: `${name} ${cents.message}` });
      return NEVER;
    }),
    v.metadata({
      minimum: centsToDollars(bounds.minCents),
      maximum: centsToDollars(bounds.maxCents),
    }),
    v.description(
      `US dollars with at most two decimals, ${formatDollars(bounds.minCents)} to ${
        formatDollars(bounds.maxCents)
      }.`,
    ),
  );
}

/**
 * An object whose missing keys are reported as "<name>.<key> is required"; `name` is the object's
 * own field path, absent for the request body itself.
 */
export function requiredObject<E extends v.ObjectEntries>(entries: E, name?: string) {
  return v.object(entries, (issue) => {
    const key = (issue.path ?? []).map((item) => String(item.key)).join(".");
    if (key && issue.input === undefined) return `${name ? `${name}.` : ""}${key} is required`;
    return name ? `${name} must be an object` : "the body must be a JSON object";
  });
}

/** A 400 in the request's surface format naming one wrong input. */
export function invalidInput(
  c: Context<AppEnv>,
  field: string,
  location: FieldLocation,
  message: string,
): Response {
  return errorResponse(c, {
    status: 400,
    code: "validation_error",
    message,
    issues: [{ field, location, message }],
  });
}

/** A 400 in the request's surface format naming every wrong input. */
export function invalidFields(c: Context<AppEnv>, issues: readonly FieldIssue[]): Response {
  return errorResponse(c, {
    status: 400,
    code: "validation_error",
    message: issues[0].message,
    issues,
  });
}

export type Parsed<T> = { ok: true; value: T; text: string } | { ok: false; response: Response };

/** Reads the body as JSON and validates it; a refusal is a ready 400 in the surface's format. */
export async function parseJsonBody<S extends v.GenericSchema>(
  c: Context<AppEnv>,
  schema: S,
): Promise<Parsed<v.InferOutput<S>>> {
  const text = await requestText(c);
  let json: unknown;
  try {
    json = text.trim() === "" ? undefined : JSON.parse(text, keepNumberSource);
  } catch (error) {
    const message = `the body is not valid JSON: ${error instanceof Error ? error.message : error}`;
    return { ok: false, response: invalidInput(c, "body", "body", message) };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return {
      ok: false,
      response: invalidInput(c, "body", "body", "the body must be a JSON object"),
    };
  }
  const result = v.safeParse(schema, json);
  if (result.success) return { ok: true, value: result.output, text };
  const issues = fieldIssues(result.issues, "body", "body");
  return {
    ok: false,
    response: errorResponse(c, {
      status: 400,
      code: "validation_error",
      message: `the request is not valid: ${
        issues.map((i) => `${i.field}: ${i.message}`).join("; ")
      }`,
      issues,
    }),
  };
}

/** Validates the query string; a refusal is a ready 400 naming each wrong parameter. */
export function parseQuery<S extends v.GenericSchema>(
  c: Context<AppEnv>,
  schema: S,
): Parsed<v.InferOutput<S>> {
  const result = v.safeParse(schema, c.req.query());
  if (result.success) return { ok: true, value: result.output, text: "" };
  return { ok: false, response: invalidFields(c, fieldIssues(result.issues, "query", "query")) };
}
