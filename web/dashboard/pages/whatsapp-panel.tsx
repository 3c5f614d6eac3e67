import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import type { Channels, Chatbot, WhatsAppLinkBody } from '../types.ts';
import { useAction, type Resource } from '../use-resource.ts';

/**
 * WhatsApp: link the business's account as a linked device (QR code shown here, or a pairing code for
 * a phone number), see the link state (linked number; the reason when unlinked), unlink. The gateway
 * that holds the chatbot's WhatsApp socket writes each new QR code; the Channels page reads it every 2 s.
 */
export function WhatsAppPanel({ chatbot, channels }: { chatbot: Chatbot; channels: Resource<Channels> }) {
  const path = `/chatbots/${chatbot.id}/channels`;
  const action = useAction();
  const [phone, setPhone] = useState('');
  const link = async (event: Event) => {
    event.preventDefault();
    await action.run(() => send('PUT', `${path}/whatsapp`, (phone.trim() ? { phone } : {}) satisfies WhatsAppLinkBody));
    await channels.reload();
  };
  if (!channels.data) return <Loading error={channels.error} />;
  const whatsapp = channels.data.whatsapp;
  const unlink = (label: string) => (
    <div>
      <ConfirmButton
        label={label}
        confirm={`${label} WhatsApp`}
        onConfirm={() => action.run(() => send('DELETE', `${path}/whatsapp`)).then(channels.reload)}
      />
    </div>
  );
  return (
    <div class="card stack whatsapp-panel">
      <h2>WhatsApp</h2>
      <Notice>{action.error}</Notice>
      {whatsapp?.state === 'linked' ? (
        <>
          <p class="connected">Linked to +{whatsapp.jid?.split('@')[0]}.</p>
          <p class="muted small">
            Answering from the phone takes a conversation over; release it from Conversations to hand it back to the AI.
          </p>
          {unlink('Unlink')}
        </>
      ) : whatsapp?.state === 'linking' ? (
        <>
          {whatsapp.pairing_code ? (
            <p class="pairing-code">
              Pairing code for +{whatsapp.phone}:{' '}
              <strong>
                {whatsapp.pairing_code.slice(0, 4)}-{whatsapp.pairing_code.slice(4)}
              </strong>
            </p>
          ) : whatsapp.qr_image ? (
            <img class="whatsapp-qr" src={whatsapp.qr_image} alt="WhatsApp QR code" width={240} height={240} />
          ) : (
            <p class="muted waiting">Waiting for a code from the gateway…</p>
          )}
          <p class="muted small">
            On the phone: WhatsApp → Settings → Linked devices → Link a device
            {whatsapp.pairing_code ? ' → Link with phone number instead.' : ', then scan the code.'}
          </p>
          {unlink('Cancel')}
        </>
      ) : (
        <form class="stack" onSubmit={(event) => void link(event)}>
          {whatsapp?.state === 'unlinked' && <p class="unlinked">Unlinked: {whatsapp.reason}.</p>}
          <p class="muted small">
            The gateway becomes a linked device of your WhatsApp account, like WhatsApp Web. Leave the number empty to
            scan a QR code.
          </p>
          <label>
            Phone number for a pairing code (optional)
            <input
              name="phone"
              type="tel"
              autocomplete="off"
              placeholder="+49 151 12345678"
              value={phone}
              onInput={(event) => setPhone(event.currentTarget.value)}
            />
          </label>
          <div>
            <button class="button primary" type="submit" disabled={action.busy}>
              Link WhatsApp
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
