import type { FunctionComponent } from 'preact';
import type { Chatbot } from '../types.ts';
import { TelegramPanel } from './telegram-panel.tsx';
import { WhatsAppPanel } from './whatsapp-panel.tsx';

/** A messaging channel's panel on the Channels page. */
export type ChannelPanel = FunctionComponent<{ chatbot: Chatbot }>;

/**
 * The channels a chatbot answers on besides the widget and the API, one panel each, side by side on
 * a wide screen.
 */
export const CHANNEL_PANELS: ChannelPanel[] = [TelegramPanel, WhatsAppPanel];

export function ChannelsPage({ chatbot }: { chatbot: Chatbot }) {
  return (
    <div class="grid two channels">
      {CHANNEL_PANELS.map((Panel, i) => (
        <Panel key={i} chatbot={chatbot} />
      ))}
    </div>
  );
}
