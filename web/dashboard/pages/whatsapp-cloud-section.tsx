import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { CopyField } from '../components/copy-button.tsx';
import { publicBase } from '../format.ts';
import { useSession } from '../session-context.ts';
import type { Channels, Chatbot, WhatsAppCloudConnectBody, WhatsAppCloudStatus } from '../types.ts';
import type { useAction, Resource } from '../use-resource.ts';

interface SectionProps {
  chatbot: Chatbot;
  channels: Resource<Channels>;
  action: ReturnType<typeof useAction>;
}

/**
 * The Cloud API transport of the WhatsApp panel: the connection as `channel whatsapp --cloud` prints
 * it (the number, the webhook URL and verify token to give Meta, the notice for messages that are not
 * text), or the form that connects it (or changes it: the token and app secret may then be left
 * empty to keep them).
 */
export function WhatsAppCloudSection({ chatbot, channels, action }: SectionProps) {
  const cloud = channels.data?.whatsapp_cloud ?? null;
  const [editing, setEditing] = useState(false);
  if (cloud && !editing) {
    return (
      <CloudConnection
        chatbot={chatbot}
        channels={channels}
        action={action}
        cloud={cloud}
        edit={() => setEditing(true)}
      />
    );
  }
  return (
    <CloudForm chatbot={chatbot} channels={channels} action={action} cloud={cloud} done={() => setEditing(false)} />
  );
}

function CloudConnection(props: SectionProps & { cloud: WhatsAppCloudStatus; edit: () => void }) {
  const { cloud, action, channels } = props;
  const { session } = useSession();
  const number = [cloud.display_phone_number, cloud.verified_name && `(${cloud.verified_name})`].filter(Boolean);
  return (
    <>
      <p class="connected">
        Connected to {number.length > 0 ? number.join(' ') : `phone number id ${cloud.phone_number_id}`} through the
        Cloud API.
      </p>
      <span class="small">Webhook callback URL</span>
      <CopyField
        value={cloud.webhook_url ?? `${publicBase(session.public_url)}${cloud.webhook_path}`}
        class="webhook-url"
      />
      <span class="small">Verify token</span>
      <CopyField value={cloud.verify_token} class="verify-token" />
      <p class="muted small">
        In your Meta app: WhatsApp → Configuration → Webhook. Paste this callback URL and verify token, then subscribe
        to the <code>messages</code> field. Meta checks the URL at once, so a gateway must be reachable at it.
      </p>
      <p class="muted small">
        WhatsApp lets a business answer only within 24 hours of the visitor's last message. After that, agents cannot
        write first: the visitor must write again (template messages are not supported).
      </p>
      <p class="small notice-text">
        Messages that are not text are answered: <q>{cloud.text_only_notice}</q>
      </p>
      <div class="actions">
        <button type="button" class="button" onClick={props.edit}>
          Change settings
        </button>
        <ConfirmButton
          label="Disconnect"
          confirm="Disconnect the Cloud API"
          onConfirm={() =>
            action
              .run(() => send('DELETE', `/chatbots/${props.chatbot.id}/channels/whatsapp-cloud`))
              .then(channels.reload)
          }
        />
      </div>
    </>
  );
}

function CloudForm(props: SectionProps & { cloud: WhatsAppCloudStatus | null; done: () => void }) {
  const { cloud, action, channels } = props;
  const [phoneNumberId, setPhoneNumberId] = useState(cloud?.phone_number_id ?? '');
  const [accountId, setAccountId] = useState(cloud?.business_account_id ?? '');
  const [token, setToken] = useState('');
  const [appSecret, setAppSecret] = useState('');
  const [notice, setNotice] = useState(cloud?.text_only_notice ?? '');
  const keeping = cloud !== null && cloud.phone_number_id === phoneNumberId.trim();
  const device = channels.data?.whatsapp;
  const linked = device !== undefined && device !== null && device.state !== 'unlinked';
  const connect = async (event: Event) => {
    event.preventDefault();
    const body: WhatsAppCloudConnectBody = {
      phone_number_id: phoneNumberId.trim(),
      business_account_id: accountId.trim() || null,
      text_only_notice: notice,
      ...(token.trim() ? { token: token.trim() } : {}),
      ...(appSecret.trim() ? { app_secret: appSecret.trim() } : {}),
    };
    const done = await action.run(() => send('PUT', `/chatbots/${props.chatbot.id}/channels/whatsapp-cloud`, body));
    if (done === undefined) return;
    setToken('');
    setAppSecret('');
    props.done();
    await channels.reload();
  };
  const secretHint = keeping ? 'leave empty to keep the one stored' : undefined;
  return (
    <form class="stack cloud-form" onSubmit={(event) => void connect(event)}>
      <p class="muted small">
        From your Meta app (developers.facebook.com): WhatsApp → API Setup gives the phone number id and the business
        account id; a system user in Business Settings gives a permanent token with{' '}
        <code>whatsapp_business_messaging</code>; App settings → Basic gives the app secret. Both secrets are stored
        encrypted and never shown again.
      </p>
      <label>
        Phone number ID
        <input
          name="phone_number_id"
          inputMode="numeric"
          autocomplete="off"
          required
          value={phoneNumberId}
          onInput={(e) => setPhoneNumberId(e.currentTarget.value)}
        />
      </label>
      <label>
        WhatsApp Business account ID (optional)
        <input
          name="business_account_id"
          inputMode="numeric"
          autocomplete="off"
          value={accountId}
          onInput={(e) => setAccountId(e.currentTarget.value)}
        />
      </label>
      <label>
        Access token
        <input
          name="token"
          type="password"
          autocomplete="off"
          required={!keeping}
          placeholder={secretHint ?? 'EAAG…'}
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
      </label>
      <label>
        App secret
        <input
          name="app_secret"
          type="password"
          autocomplete="off"
          required={!keeping}
          placeholder={secretHint}
          value={appSecret}
          onInput={(e) => setAppSecret(e.currentTarget.value)}
        />
      </label>
      <label>
        Notice for messages that are not text (optional)
        <input
          name="text_only_notice"
          maxLength={500}
          placeholder="Sorry, I can only read text messages."
          value={notice}
          onInput={(e) => setNotice(e.currentTarget.value)}
        />
      </label>
      {linked && <p class="small switch-note">Connecting the Cloud API unlinks the linked device.</p>}
      <div class="actions">
        <button class="button primary" type="submit" disabled={action.busy}>
          {cloud ? 'Save Cloud API settings' : 'Connect the Cloud API'}
        </button>
        {cloud && (
          <button type="button" class="button ghost" onClick={props.done}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
