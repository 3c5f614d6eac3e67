import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import type { Channels, Chatbot, WhatsAppLinkBody, WhatsAppTransport } from '../types.ts';
import { useAction, type Resource } from '../use-resource.ts';
import { WhatsAppCloudSection } from './whatsapp-cloud-section.tsx';

/**
 * WhatsApp, by the transport the owner chooses: the official Business Cloud API (see
 * WhatsAppCloudSection), or the business's own account as a linked device, whose ban risk the panel
 * states plainly. Choosing one and connecting it ends the other. The linked device: the QR code shown
 * here (or a pairing code for a phone number), the link state (linked number; the reason when
 * unlinked), unlink. The gateway that holds the chatbot's WhatsApp socket writes each new QR code;
 * the Channels page reads it every 2 s.
 */
export function WhatsAppPanel({ chatbot, channels }: { chatbot: Chatbot; channels: Resource<Channels> }) {
  const action = useAction();
  const [chosen, setChosen] = useState<WhatsAppTransport | undefined>(undefined);
  if (!channels.data) return <Loading error={channels.error} />;
  const device = channels.data.whatsapp;
  // An unlinked device's record stays (with why) until it is linked again or the Cloud API connected.
  const shown: WhatsAppTransport = channels.data.whatsapp_cloud ? 'cloud' : device ? 'linked_device' : 'cloud';
  const transport = chosen ?? shown;
  const deviceState = device && device.state !== 'unlinked' ? ` — ${device.state}` : '';
  return (
    <div class="card stack whatsapp-panel">
      <h2>WhatsApp</h2>
      <Notice>{action.error}</Notice>
      <fieldset class="transport">
        <legend>How the chatbot reaches WhatsApp</legend>
        <label class="check">
          <input
            type="radio"
            name="transport"
            value="cloud"
            checked={transport === 'cloud'}
            onChange={() => setChosen('cloud')}
          />
          Cloud API (official){channels.data.whatsapp_cloud ? ' — connected' : ''}
        </label>
        <label class="check">
          <input
            type="radio"
            name="transport"
            value="linked_device"
            checked={transport === 'linked_device'}
            onChange={() => setChosen('linked_device')}
          />
          Linked device (unofficial: Meta may ban the number){deviceState}
        </label>
      </fieldset>
      {transport === 'cloud' ? (
        <>
          <p class="muted small">
            Meta's WhatsApp Business Platform: a business number registered with Meta, Meta's terms and its prices per
            conversation. The safe choice for a business.
          </p>
          <WhatsAppCloudSection chatbot={chatbot} channels={channels} action={action} />
        </>
      ) : (
        <>
          <p class="notice warning ban-risk" role="note">
            <strong>Ban risk:</strong> a linked device automates WhatsApp Web, which WhatsApp's terms do not allow. Meta
            may ban the number, without warning and for good. Use it only with a number you can afford to lose; a
            business should use the Cloud API.
          </p>
          <LinkedDeviceSection chatbot={chatbot} channels={channels} action={action} />
        </>
      )}
    </div>
  );
}

/** The linked device: link by QR or pairing code, the link state, unlink. */
function LinkedDeviceSection({
  chatbot,
  channels,
  action,
}: {
  chatbot: Chatbot;
  channels: Resource<Channels>;
  action: ReturnType<typeof useAction>;
}) {
  const path = `/chatbots/${chatbot.id}/channels`;
  const [phone, setPhone] = useState('');
  const link = async (event: Event) => {
    event.preventDefault();
    await action.run(() => send('PUT', `${path}/whatsapp`, (phone.trim() ? { phone } : {}) satisfies WhatsAppLinkBody));
    await channels.reload();
  };
  const whatsapp = channels.data?.whatsapp ?? null;
  const unlink = (label: string) => (
    <div>
      <ConfirmButton
        label={label}
        confirm={`${label} WhatsApp`}
        onConfirm={() => action.run(() => send('DELETE', `${path}/whatsapp`)).then(channels.reload)}
      />
    </div>
  );
  if (whatsapp?.state === 'linked') {
    return (
      <>
        <p class="connected">Linked to +{whatsapp.jid?.split('@')[0]}.</p>
        <p class="muted small">
          Answering from the phone takes a conversation over; release it from Conversations to hand it back to the AI.
        </p>
        {unlink('Unlink')}
      </>
    );
  }
  if (whatsapp?.state === 'linking') {
    return (
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
    );
  }
  return (
    <form class="stack" onSubmit={(event) => void link(event)}>
      {whatsapp?.state === 'unlinked' && <p class="unlinked">Unlinked: {whatsapp.reason}.</p>}
      <p class="muted small">
        The gateway becomes a linked device of your WhatsApp account, like WhatsApp Web. Leave the number empty to scan
        a QR code.
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
      {channels.data?.whatsapp_cloud && <p class="small switch-note">Linking a device disconnects the Cloud API.</p>}
      <div>
        <button class="button primary" type="submit" disabled={action.busy}>
          Link WhatsApp
        </button>
      </div>
    </form>
  );
}
