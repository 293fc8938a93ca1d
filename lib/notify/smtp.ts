/** E-mail over SMTP (nodemailer), configured from one connection URL and a From address. */
import nodemailer, { type Transporter } from "nodemailer";
import { type NotificationMessage, type NotificationTransport, PermanentSendError } from "./mod.ts";
import { untilDurable } from "../platform/durability.ts";

export interface SmtpOptions {
  /**
   * `smtps://user:pass@host:465` (TLS from the first byte) or `smtp://user:pass@host:587`
   * (STARTTLS, required unless the host is loopback or the URL says `?requireTLS=false`).
   * nodemailer's other connection options may be given as query parameters.
   */
  readonly url: string;
  /** The From header: `payments@example.com` or `Payments <payments@example.com>`. */
  readonly from: string;
  /** Bounds connecting, the server's greeting and every later wait on the server. */
  readonly timeoutMs: number;
  /** Connections kept open to the server at most. */
  readonly connectionsMax: number;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * A 5xx answer to RCPT TO refuses this recipient for good (no such mailbox); a 5xx to AUTH or
 * MAIL FROM is about the service's settings and is retried until they are fixed.
 */
function recipientRefused(error: unknown): boolean {
  const { command, responseCode } = error as { command?: unknown; responseCode?: unknown };
  return command === "RCPT TO" && typeof responseCode === "number" && responseCode >= 500;
}

export class SmtpTransport implements NotificationTransport {
  readonly #mailer: Transporter;
  readonly #from: string;
  readonly #messageIdDomain: string;

  constructor(options: SmtpOptions) {
    const host = new URL(options.url).hostname;
    this.#mailer = nodemailer.createTransport({
      url: options.url,
      pool: true,
      maxConnections: options.connectionsMax,
      // Credentials and payees' portal links never cross the network in clear text by default.
      requireTLS: !LOOPBACK_HOSTS.has(host),
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    });
    this.#from = options.from;
    this.#messageIdDomain = options.from.slice(options.from.lastIndexOf("@") + 1).replace(
      />\s*$/,
      "",
    );
  }

  async send(message: NotificationMessage): Promise<void> {
    if (message.channel !== "email") {
      throw new Error(`the SMTP transport sends e-mail, not ${message.channel}`);
    }
    await untilDurable();
    try {
      await this.#mailer.sendMail({
        from: this.#from,
        to: message.to,
        subject: message.subject ?? "",
        text: message.body,
        // The same Message-ID on a resend after a crash lets mail systems drop the duplicate.
        messageId: `<${message.id}@${this.#messageIdDomain}>`,
      });
    } catch (error) {
      throw recipientRefused(error) ? new PermanentSendError(String(error)) : error;
    }
  }

  /** Closes the pooled connections. */
  close(): void {
    this.#mailer.close();
  }
}
