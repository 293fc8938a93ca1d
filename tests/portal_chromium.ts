/**
 * The portal in real Chromium: the fixture's app served on a free loopback port, a headless
 * Chromium holding the verified payee's session cookies, and a record of every request to and
 * answer from the watched URLs, to show what the portal's side ever sent or received.
 */
import { chromium, type Page } from "playwright-core";
import type { HttpFixture } from "./http_fixture.ts";
import type { PortalBrowser } from "./portal_helpers.ts";

const CHROMIUM = "/usr/bin/chromium";

/**
 * Runs `fn` with a Chromium page on `portal`'s session at the app's `origin` (on `port`) and the
 * traffic seen at URLs starting with `origin + watched` (each request's URL and body, each
 * answer's text).
 */
export async function inPortalChromium(
  f: HttpFixture,
  portal: PortalBrowser,
  options: { readonly port: number; readonly watched?: string },
  fn: (page: Page, traffic: readonly string[], origin: string) => Promise<void>,
): Promise<void> {
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: options.port, onListen: () => {} },
    f.app.fetch,
  );
  const origin = `http://127.0.0.1:${http.addr.port}`;
  const watched = `${origin}${options.watched ?? ""}`;
  const chrome = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  try {
    const context = await chrome.newContext();
    await context.addCookies(
      portal.cookies().map(([name, value]) => ({ name, value, url: origin })),
    );
    const page = await context.newPage();
    const traffic: string[] = [];
    page.on("request", (request) => {
      if (request.url().startsWith(watched)) {
        traffic.push(`${request.url()} ${request.postData() ?? ""}`);
      }
    });
    page.on("response", async (response) => {
      if (response.url().startsWith(watched)) {
        traffic.push(await response.text().catch(() => ""));
      }
    });
    await fn(page, traffic, origin);
  } finally {
    await chrome.close();
    await http.shutdown();
  }
}
