/** @jsxImportSource hono/jsx */
/**
 * The sandbox inbox (contract §13): what the test environment "sent" by e-mail and SMS, newest
 * first, with links and codes, so a developer can act as the payee without a real mailbox.
 */
import { Hono } from "hono";
import { sandboxInbox } from "../lib/sandbox/service.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

const INBOX_PAGE_SIZE = 200;

/** A message of /sandbox/inbox.json. */
export interface InboxMessage {
  id: string;
  channel: "email" | "sms";
  to: string;
  subject: string | null;
  body: string;
  links: string[];
  code?: string;
  sent_at: string;
}

const INBOX_CSS =
  `body{font-family:system-ui,sans-serif;max-width:48rem;margin:1rem auto;padding:0 1rem;color:#111}
article{border:1px solid #bbb;border-radius:.5rem;padding:.75rem 1rem;margin:.75rem 0}
h2{font-size:1.05rem;margin:.2rem 0}.meta{color:#444;font-size:.9rem}pre{white-space:pre-wrap}
.code{font-size:1.3rem;font-weight:700;letter-spacing:.1em}
`;

export function sandboxRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    if (!deps.config.sandboxInbox) {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: "the sandbox inbox is off",
      });
    }
    await next();
  });

  const listInbox = async (): Promise<InboxMessage[]> => {
    const messages = await sandboxInbox(deps.databases.test, INBOX_PAGE_SIZE);
    return messages.map((message) => ({
      id: message.id,
      channel: message.channel,
      to: message.recipient,
      subject: message.subject,
      body: message.body,
      links: message.links,
      ...(message.code ? { code: message.code } : {}),
      sent_at: new Date(message.at).toISOString(),
    }));
  };

  app.get("/inbox.json", async (c) => c.json({ object: "list", data: await listInbox() }));

  // A stylesheet of its own, not an inline <style>: the strict style-src 'self' refuses those.
  app.get("/inbox.css", (c) => {
    c.header("Content-Type", "text/css; charset=utf-8");
    c.header("Cache-Control", "public, max-age=3600");
    return c.body(INBOX_CSS);
  });

  app.get("/inbox", async (c) => {
    const messages = await listInbox();
    c.header("Cache-Control", "no-store");
    return c.html(
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>Sandbox inbox</title>
          <link rel="stylesheet" href="/sandbox/inbox.css" />
        </head>
        <body>
          <main>
            <h1>Sandbox inbox</h1>
            <p>Messages the test environment sent, newest first. Nothing here left this machine.</p>
            {messages.length === 0 ? <p>No messages yet.</p> : messages.map((message) => (
              <article>
                <h2>{message.subject ?? `SMS to ${message.to}`}</h2>
                <p class="meta">
                  {message.channel === "email" ? "E-mail" : "SMS"} to {message.to} ·{" "}
                  {message.sent_at}
                </p>
                {message.code
                  ? (
                    <p>
                      Code: <span class="code">{message.code}</span>
                    </p>
                  )
                  : null}
                <pre>{message.body}</pre>
                <ul>
                  {message.links.map((link) => (
                    <li>
                      <a href={link}>{link}</a>
                    </li>
                  ))}
                </ul>
              </article>
            ))}
          </main>
        </body>
      </html>,
    );
  });
  return app;
}
