/**
 * Edge validation: a JSON body parsed and checked with a valibot schema, every issue turned into
 * the surface's error with the dotted field path. A validator's raw output is never returned.
 */
import type { Context } from "hono";
import * as v from "valibot";
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

export type Parsed<T> = { ok: true; value: T; text: string } | { ok: false; response: Response };

/** Reads the body as JSON and validates it; a refusal is a ready 400 in the surface's format. */
export async function parseJsonBody<S extends v.GenericSchema>(
  c: Context<AppEnv>,
  schema: S,
): Promise<Parsed<v.InferOutput<S>>> {
  const text = await c.req.text();
  let json: unknown;
  try {
    json = text.trim() === "" ? undefined : JSON.parse(text);
  } catch (error) {
    const message = `the body is not valid JSON: ${error instanceof Error ? error.message : error}`;
    return {
      ok: false,
      response: errorResponse(c, {
        status: 400,
        code: "validation_error",
        message,
        issues: [{ field: "body", location: "body", message }],
      }),
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
