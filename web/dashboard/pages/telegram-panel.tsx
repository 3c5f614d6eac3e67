import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { CopyField } from '../components/copy-button.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { publicBase } from '../format.ts';
import { useSession } from '../session-context.ts';
import type { Channels, Chatbot, TelegramConnectBody } from '../types.ts';
import { useAction, type Resource } from '../use-resource.ts';

/**
 * Telegram: connect a bot made with @BotFather (token and mode), see the connection as
 * `channel telegram` prints it (mode, webhook path, secret token), disconnect.
 */
export function TelegramPanel({ chatbot, channels }: { chatbot: Chatbot; channels: Resource<Channels> }) {
  const path = `/chatbots/${chatbot.id}/channels`;
  const action = useAction();
  const [token, setToken] = useState('');
  const [mode, setMode] = useState<'webhook' | 'polling'>('webhook');
  const { session } = useSession();
  const connect = async (event: Event) => {
    event.preventDefault();
    const done = await action.run(() => send('PUT', `${path}/telegram`, { token, mode } satisfies TelegramConnectBody));
    if (done) setToken('');
    await channels.reload();
  };
  if (!channels.data) return <Loading error={channels.error} />;
  const telegram = channels.data.telegram;
  return (
    <div class="card stack telegram-panel">
      <h2>Telegram</h2>
      <Notice>{action.error}</Notice>
      {telegram ? (
        <>
          <p class="connected">
            Connected{telegram.bot_username ? ` to @${telegram.bot_username}` : ''} in <strong>{telegram.mode}</strong>{' '}
            mode.
          </p>
          {telegram.webhook_path && (
            <>
              <span class="small">Webhook URL</span>
              <CopyField value={`${publicBase(session.public_url)}${telegram.webhook_path}`} class="webhook-path" />
              <span class="small">Secret token</span>
              <CopyField value={telegram.secret_token ?? ''} class="secret-token" />
              <p class="muted small">
                {session.public_url
                  ? 'Every gateway registers this URL with Telegram by itself.'
                  : 'PUBLIC_URL is not set: call setWebhook with this URL and secret token yourself.'}
              </p>
            </>
          )}
          <div>
            <ConfirmButton
              label="Disconnect"
              confirm="Disconnect Telegram"
              onConfirm={() => action.run(() => send('DELETE', `${path}/telegram`)).then(channels.reload)}
            />
          </div>
        </>
      ) : (
        <form class="stack" onSubmit={(event) => void connect(event)}>
          <p class="muted small">Create a bot with @BotFather and paste its token.</p>
          <label>
            Bot token
            <input
              name="token"
              type="password"
              autocomplete="off"
              required
              placeholder="123456:ABC…"
              value={token}
              onInput={(event) => setToken(event.currentTarget.value)}
            />
          </label>
          <label>
            Mode
            <select
              name="mode"
              value={mode}
              onChange={(event) => setMode(event.currentTarget.value as 'webhook' | 'polling')}
            >
              <option value="webhook">Webhook (Telegram calls this gateway)</option>
              <option value="polling">Long polling (no public URL needed)</option>
            </select>
          </label>
          <div>
            <button class="button primary" type="submit" disabled={action.busy}>
              Connect
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
