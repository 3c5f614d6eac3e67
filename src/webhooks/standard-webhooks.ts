import { createHmac } from 'node:crypto';

// Standard Webhooks (https://www.standardwebhooks.com), opt-in per webhook, beside SPEC's
// X-Switchboard-Signature. Its secrets are `whsec_` and the base64 of the HMAC key; a Switchboard
// secret is `whsec_` and the base64url of 32 random bytes. Those 32 bytes are the Standard Webhooks
// key, so one secret serves both signatures: SPEC's is keyed with the whole secret string as it is
// shown, Standard Webhooks' with the bytes it encodes. The official libraries decode standard base64
// only, so they take the same key re-encoded: `standardWebhooksSecret`.

const PREFIX = 'whsec_';

/** The HMAC key a webhook secret stands for in Standard Webhooks: the bytes its base64url part encodes. */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64url');
}

/** The same secret as the Standard Webhooks libraries take it: `whsec_` and the key in standard base64. */
export function standardWebhooksSecret(secret: string): string {
  return PREFIX + standardWebhooksKey(secret).toString('base64');
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (the delivery's id, the same on every
 * attempt), `webhook-timestamp` (the attempt's time in Unix seconds) and `webhook-signature`
 * (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` keyed with the secret's bytes).
 */
export function standardWebhooksHeaders(
  secret: string,
  deliveryId: string,
  timestampSeconds: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const signed = `${deliveryId}.${timestampSeconds}.${body}`;
  const signature = createHmac('sha256', standardWebhooksKey(secret)).update(signed).digest('base64');
  return {
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
