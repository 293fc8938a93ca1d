/**
 * A settings file's first problem as a refusal (pure): the dotted path of the field at fault and a
 * message that starts with that field's name, as an operator reads it after `<provider>:set`.
 */
import type * as v from "valibot";
import { type Refusal, refuse } from "./result.ts";

/** The refusal of a settings file's first valibot issue. */
export function settingsInputRefusal(
  issues: readonly v.BaseIssue<unknown>[],
): Refusal<"invalid_input"> {
  const issue = issues[0];
  const field = issue.path?.map((item) => String(item.key)).join(".") || "settings";
  const message = issue.message.startsWith(field.split(".")[0])
    ? issue.message
    : `${field}: ${issue.message}`;
  return refuse("invalid_input", message, { field });
}
