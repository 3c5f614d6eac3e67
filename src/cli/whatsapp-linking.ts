import { LINK_TIMEOUT_MS } from '../channels/whatsapp/rules.ts';
import type { Services } from '../services.ts';
import type { WhatsAppConnection } from '../channels/whatsapp/whatsapp-store.ts';
import { CliError } from './cli-runtime.ts';

/** How often the link state is read while the owner scans or types. */
const POLL_MS = 250;
/** How long linking waits for a gateway to run the socket before it says none is running. */
const GATEWAY_WAIT_MS = 5000;

/**
 * Starts linking a chatbot's WhatsApp account and follows it to the end: the gateway holding the
 * socket writes each QR code (or the pairing code) to Redis, and they are shown on `out` (stderr:
 * stdout carries the command's one JSON value) until the phone has linked the device. A chatbot
 * linked already is reported as it is.
 */
export async function linkWhatsApp(
  services: Services,
  chatbotId: string,
  phone: string | undefined,
  out: NodeJS.WritableStream,
): Promise<WhatsAppConnection> {
  const requested = await services.whatsappLinker.link(chatbotId, phone);
  if (requested.state === 'linked') return requested;
  const started = Date.now();
  let runningSince = started;
  let shown = '';
  for (;;) {
    const connection = await services.whatsapp.get(chatbotId);
    if (connection.state === 'linked') return connection;
    if (connection.state === 'unlinked') throw new CliError(`WhatsApp linking failed: ${connection.reason}.`);
    const code = connection.pairing_code ?? connection.qr ?? '';
    if (code && code !== shown) {
      shown = code;
      out.write(await instructions(connection));
    }
    if (await services.whatsapp.socketRunning(chatbotId)) runningSince = Date.now();
    else if (Date.now() - runningSince > GATEWAY_WAIT_MS) {
      await services.whatsapp.unlinked(chatbotId, 'no gateway was running to link it');
      throw new CliError('No gateway is running to link WhatsApp: start one (npm start) and try again.');
    }
    if (Date.now() - started > LINK_TIMEOUT_MS) {
      // The gateway stops offering codes.
      await services.whatsappLinker.abandon(chatbotId, 'the code was not used in time');
      throw new CliError('WhatsApp linking timed out: the code was not used within 3 minutes.');
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function instructions(connection: WhatsAppConnection): Promise<string> {
  if (connection.pairing_code) {
    const code = connection.pairing_code;
    return (
      `Pairing code for +${connection.phone}: ${code.slice(0, 4)}-${code.slice(4)}\n` +
      'On the phone: WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead.\n'
    );
  }
  const { default: QRCode } = await import('qrcode');
  const qr = await QRCode.toString(connection.qr!, { type: 'terminal', small: true });
  return `${qr}\nScan with the phone: WhatsApp → Settings → Linked devices → Link a device.\n`;
}
