/**
 * Signed documents by expiring signed link (contract §9): no token, the link itself is the proof.
 * An expired, altered or foreign link is a 404 so a link reveals nothing about what exists.
 */
import { Hono } from "hono";
import { signedDocumentContent } from "../lib/documents/service.ts";
import type { Environment } from "../lib/platform/config.ts";
import type { DocumentLinkSigner } from "../lib/documents/links.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

export function documentLinkRoutes(deps: AppDeps, documentLinks: DocumentLinkSigner): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/:environment/signed/:id", async (c) => {
    const environment = c.req.param("environment");
    const id = c.req.param("id");
    const known = environment === "test" || environment === "live";
    const valid = known && await documentLinks.verify(
      environment as Environment,
      id,
      c.req.query("expires"),
      c.req.query("signature"),
      deps.clock.now(),
    );
    const document = valid
      ? await signedDocumentContent(deps.databases[environment as Environment], id)
      : null;
    if (!document) {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: "this document link is not valid or has expired; ask for a new one",
      });
    }
    c.header("Content-Type", "application/pdf");
    c.header(
      "Content-Disposition",
      `attachment; filename="${document.name.replace(/[^\w.\- ]/g, "_")}.pdf"`,
    );
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Cache-Control", "private, no-store");
    return c.body(document.content as Uint8Array<ArrayBuffer>);
  });
  return app;
}
