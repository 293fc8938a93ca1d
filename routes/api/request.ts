/** What Surface A handlers take from every request: the company's idempotency target and the line it names. */
import type { Context } from "hono";
import { companyLine, type LineRef } from "../../lib/identity/service.ts";
import type { AppEnv } from "../context.ts";
import type { FieldLocation } from "../errors.ts";
import type { IdempotentTarget } from "../idempotency.ts";
import { invalidInput } from "../validation.ts";

/** Surface A keys idempotency by company: its keys are not scoped to a line. */
export function companyTarget(c: Context<AppEnv>): IdempotentTarget {
  const principal = c.get("apiPrincipal");
  return { database: principal.database, companyId: principal.companyId, scopeLine: "" };
}

/** The named business line (the company's first when none is named), or a ready 400. */
export async function requestedLine(
  c: Context<AppEnv>,
  code: string | null | undefined,
  location: FieldLocation = "body",
): Promise<{ ok: true; line: LineRef } | { ok: false; response: Response }> {
  const principal = c.get("apiPrincipal");
  // The first line came with the caller's credentials; a named other line is one more read.
  const line = code === null || code === undefined || code === principal.firstLine?.code
    ? principal.firstLine
    : await companyLine(principal.database, principal.companyId, code);
  if (line) return { ok: true, line };
  const message = `the company has no line ${JSON.stringify(code ?? null)}`;
  return { ok: false, response: invalidInput(c, "line", location, message) };
}
