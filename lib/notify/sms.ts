/**
 * SMS through an HTTP provider. A provider adapter turns a message into the provider's request;
 * the transport sends it with a timeout, follows no redirect, and treats any non-2xx answer as a
 * failure naming the status (a refusal of the message itself as permanent). Another provider is
 * one more adapter.
 */
import { type NotificationMessage, type NotificationTransport, PermanentSendError } from "./mod.ts";
import { untilDurable } from "../platform/durability.ts";

export interface SmsProviderRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** How one provider's API takes a message. */
export interface SmsProviderAdapter {
  /** Names the provider in error messages. */
  readonly name: string;
  request(message: NotificationMessage): SmsProviderRequest;
}

/**
 * The generic provider: `POST url` with `{"to", "body"}` as JSON and `Authorization: Bearer`.
 * The notification id travels as `Idempotency-Key`, so a provider that honours it drops the
 * duplicate that an at-least-once resend can produce.
 */
export function jsonBearerProvider(settings: { url: string; token: string }): SmsProviderAdapter {
  return {
    name: new URL(settings.url).host,
    request: (message) => ({
      url: settings.url,
      headers: {
        "Authorization": `Bearer ${settings.token}`,
        "Content-Type": "application/json",
        "Idempotency-Key": message.id,
      },
      body: JSON.stringify({ to: message.to, body: message.body }),
    }),
  };
}

/**
 * Answers that refuse the message itself (a malformed or unknown number); 401, 403, 408, 429 and
 * 5xx are about the service or the moment and are retried.
 */
const MESSAGE_REFUSED = new Set([400, 404, 410, 422]);

/** How much of a refusal's body is kept in the error. */
const ERROR_EXCERPT_CHARACTERS_MAX = 200;

export class SmsTransport implements NotificationTransport {
  constructor(
    private readonly provider: SmsProviderAdapter,
    private readonly options: { timeoutMs: number },
  ) {}

  async send(message: NotificationMessage): Promise<void> {
    if (message.channel !== "sms") {
      throw new Error(`the SMS transport sends SMS, not ${message.channel}`);
    }
    const request = this.provider.request(message);
    await untilDurable();
    const response = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    const text = await response.text();
    if (response.status < 200 || response.status > 299) {
      const reason = `SMS provider ${this.provider.name} answered ${response.status}: ${
        text.slice(0, ERROR_EXCERPT_CHARACTERS_MAX)
      }`;
      throw MESSAGE_REFUSED.has(response.status)
        ? new PermanentSendError(reason)
        : new Error(reason);
    }
  }
}
