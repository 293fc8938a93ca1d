/**
 * The security headers the docs' middleware sets on every answer that passes through it (every
 * route mounted after it: the API's, the docs', a 404), here so that the API's core sets the same
 * ones without loading the docs' pages.
 */

/** The pages' policy: nothing from elsewhere, nothing framed. A route's own policy is kept. */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Sets the docs' security headers on an answer's own headers. */
export function setDocsSecurityHeaders(headers: Headers): void {
  if (!headers.has("Content-Security-Policy")) headers.set("Content-Security-Policy", DOCS_CSP);
  headers.set("X-Content-Type-Options", "nosniff");
  headers.set("Referrer-Policy", "no-referrer");
}
