/**
 * Edge validation: a JSON body parsed and checked with a valibot schema, every issue turned into
 * the surface's error with the dotted field path. A validator's raw output is never returned.
 */
import type { Context } from "hono";
import * as v from "valibot";
import { formatDollars, parseDollars } from "../lib/platform/money.ts";
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
  );
}

/**
 * A JSON number of dollars, turned into cents from its source text. Its bounds, in dollars, go
 * into the OpenAPI document as the number's minimum and maximum.
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
    v.metadata({ minimum: bounds.minCents / 100, maximum: bounds.maxCents / 100 }),
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
  const text = await c.req.text();
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
