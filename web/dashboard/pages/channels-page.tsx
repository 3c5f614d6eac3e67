import type { Chatbot, Channels } from '../types.ts';
import { useResource } from '../use-resource.ts';
import { TelegramPanel } from './telegram-panel.tsx';
import { WhatsAppPanel } from './whatsapp-panel.tsx';

/** How often the link state is read again while the owner scans the WhatsApp code. */
const LINKING_POLL_MS = 2000;

/**
 * The channels a chatbot answers on besides the widget and the API, one panel each, side by side on
 * a wide screen. Both panels show the one read of the chatbot's connections, read again every 2 s
 * while WhatsApp is linking (the gateway that holds the socket writes each new QR code).
 */
export function ChannelsPage({ chatbot }: { chatbot: Chatbot }) {
  const channels = useResource<Channels>(`/chatbots/${chatbot.id}/channels`, {
    pollMs: LINKING_POLL_MS,
    poll: (data) => data.whatsapp?.state === 'linking',
  });
  return (
    <div class="grid two channels">
      <TelegramPanel chatbot={chatbot} channels={channels} />
      <WhatsAppPanel chatbot={chatbot} channels={channels} />
    </div>
  );
}
