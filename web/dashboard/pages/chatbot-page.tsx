import { Loading } from '../components/notice.tsx';
import { href } from '../router.ts';
import type { Chatbot } from '../types.ts';
import { useResource } from '../use-resource.ts';
import { ChannelsPage } from './channels-page.tsx';
import { ChatbotSettingsPage } from './chatbot-settings-page.tsx';
import { ConversationsPage } from './conversations-page.tsx';
import { LeadsPage } from './leads-page.tsx';
import { SourcesPage } from './sources-page.tsx';
import { UnansweredPage } from './unanswered-page.tsx';
import { WebhooksPage } from './webhooks-page.tsx';
import { WidgetPage } from './widget-page.tsx';

const TABS = [
  { id: 'settings', label: 'Settings' },
  { id: 'sources', label: 'Sources' },
  { id: 'widget', label: 'Widget' },
  { id: 'channels', label: 'Channels' },
  { id: 'webhooks', label: 'Webhooks' },
  { id: 'leads', label: 'Leads' },
  { id: 'conversations', label: 'Conversations' },
  { id: 'unanswered', label: 'Unanswered' },
];

/** One chatbot: its name and state, the tabs, and the current tab's page. */
export function ChatbotPage({ chatbotId, path }: { chatbotId: string; path: string[] }) {
  const chatbot = useResource<Chatbot>(`/chatbots/${encodeURIComponent(chatbotId)}`);
  const [tab = 'settings', ...rest] = path;
  if (!chatbot.data) return <Loading error={chatbot.error} />;
  const bot = chatbot.data;
  return (
    <section class="chatbot">
      <p class="crumbs">
        <a href={href('chatbots')}>Chatbots</a> /
      </p>
      <h1 class="chatbot-name">
        {bot.name} <span class={`badge ${bot.is_active ? 'ok' : 'paused'}`}>{bot.is_active ? 'Active' : 'Paused'}</span>
      </h1>
      <nav class="tabs" aria-label="Chatbot">
        {TABS.map(({ id, label }) => (
          <a
            key={id}
            href={href('chatbots', bot.id, id)}
            class={tab === id ? 'active' : ''}
            aria-current={tab === id ? 'page' : undefined}
          >
            {label}
          </a>
        ))}
      </nav>
      {tabPage(bot, tab, rest, chatbot.reload)}
    </section>
  );
}

function tabPage(bot: Chatbot, tab: string, rest: string[], reload: () => Promise<void>) {
  switch (tab) {
    case 'sources':
      return <SourcesPage chatbot={bot} />;
    case 'widget':
      return <WidgetPage chatbot={bot} />;
    case 'channels':
      return <ChannelsPage chatbot={bot} />;
    case 'webhooks':
      return <WebhooksPage chatbot={bot} webhookId={rest[0]} />;
    case 'leads':
      return <LeadsPage chatbot={bot} leadId={rest[0]} />;
    case 'conversations':
      return <ConversationsPage chatbot={bot} sessionId={rest[0]} />;
    case 'unanswered':
      return <UnansweredPage chatbot={bot} filter={rest[0]} />;
    default:
      return <ChatbotSettingsPage chatbot={bot} onChanged={reload} />;
  }
}
