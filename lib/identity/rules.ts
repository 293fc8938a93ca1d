/** Shapes of identity inputs, shared by the operator CLI and the admin endpoint. */
import * as v from "valibot";

export const tinSchema = v.pipe(v.string(), v.regex(/^\d{9}$/, "a TIN is exactly 9 digits"));
export const emailSchema = v.pipe(
  v.string(),
  v.maxLength(255, "an e-mail address is at most 255 characters"),
  v.email("not a valid e-mail address"),
);
export const companyNameSchema = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, "a company name must not be empty"),
  v.maxLength(255, "a company name is at most 255 characters"),
);
export const lineCodeSchema = v.pipe(
  v.string(),
  v.regex(
    /^[a-z0-9][a-z0-9_-]{0,39}$/,
    "a line code is 1-40 of a-z, 0-9, _ and -, starting with a letter or digit",
  ),
);
