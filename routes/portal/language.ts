/**
 * The language of a portal page: a choice made with the page's English | Español switch (kept in
 * a cookie scoped to the link, so the forms and redirects that follow keep it), else the language
 * the holder's messages were sent in, else the browser's Accept-Language when it prefers Spanish.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { Language } from "../../lib/notify/messages.ts";
import { type PortalText, portalText } from "../../lib/portal/portal_text.ts";

const LANGUAGE_COOKIE = "portal_lang";

/** What a page needs to speak its language and offer the other one. */
export interface Locale {
  readonly language: Language;
  readonly text: PortalText;
  /** This page in each language: the switch's links. */
  readonly switchHrefs: Readonly<Record<Language, string>>;
}

/** Only `en` or `es` counts as a choice; any other value is ignored. */
const chosen = (value: string | undefined): Language | null =>
  value === "en" || value === "es" ? value : null;

/**
 * Spanish when the header ranks a Spanish tag (`es`, `es-MX`, …) above every English one (by
 * q-value, then by order), else English.
 */
export function acceptedLanguage(header: string | undefined): Language {
  const best: Record<Language, { q: number; index: number }> = {
    en: { q: 0, index: Infinity },
    es: { q: 0, index: Infinity },
  };
  (header ?? "").split(",").forEach((entry, index) => {
    const [tag, ...parameters] = entry.trim().toLowerCase().split(";");
    const primary = tag.trim().split("-")[0];
    if (primary !== "en" && primary !== "es") return;
    const qParameter = parameters.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParameter === undefined ? 1 : Number(qParameter.slice(2));
    if (!(q > 0 && q <= 1) || q <= best[primary].q) return;
    best[primary] = { q, index };
  });
  const { en, es } = best;
  return es.q > en.q || (es.q > 0 && es.q === en.q && es.index < en.index) ? "es" : "en";
}

const recorded = new WeakMap<Request, Locale>();

/**
 * The language of this request's page. `base` is the path the link's cookies are scoped to;
 * `holder` the language of the holder's messages, null when no payout is known (or must not be
 * told, as on the non-secret landing page).
 */
export function chooseLocale(
  c: Context,
  options: { base: string; holder: Language | null; secure: boolean },
): Locale {
  const asked = chosen(c.req.query("lang"));
  if (asked) {
    // A browser-session cookie: the choice holds through the flow of forms and redirects.
    setCookie(c, LANGUAGE_COOKIE, asked, {
      path: options.base,
      httpOnly: true,
      sameSite: "Lax",
      secure: options.secure,
    });
  }
  const language = asked ?? chosen(getCookie(c, LANGUAGE_COOKIE)) ?? options.holder ??
    acceptedLanguage(c.req.header("Accept-Language"));
  const locale = {
    language,
    text: portalText(language),
    switchHrefs: { en: switchHref(c, options.base, "en"), es: switchHref(c, options.base, "es") },
  };
  recorded.set(c.req.raw, locale);
  return locale;
}

/** The locale this request's page was given, for a page rendered after a failure. */
export function recordedLocale(c: Context): Locale | undefined {
  return recorded.get(c.req.raw);
}

/** A GET page switches in place; a page answering a POST switches on the link's own page. */
function switchHref(c: Context, base: string, language: Language): string {
  if (c.req.method !== "GET") return `${base}?lang=${language}`;
  const url = new URL(c.req.url);
  url.searchParams.set("lang", language);
  return `${url.pathname}${url.search}`;
}
