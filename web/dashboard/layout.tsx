import { AccountMenu } from './components/account-menu.tsx';
import { AgentsPage } from './pages/agents-page.tsx';
import { ApiKeysPage } from './pages/api-keys-page.tsx';
import { CannedRepliesPage } from './pages/canned-replies-page.tsx';
import { ChatbotListPage } from './pages/chatbot-list-page.tsx';
import { ChatbotPage } from './pages/chatbot-page.tsx';
import { ConnectionsPage } from './pages/connections-page.tsx';
import { UsagePage } from './pages/usage-page.tsx';
import { href } from './router.ts';

const SECTIONS = [
  { id: 'chatbots', label: 'Chatbots' },
  { id: 'connections', label: 'Connections' },
  { id: 'developer', label: 'Developer' },
  { id: 'agents', label: 'Agents' },
  { id: 'canned-replies', label: 'Canned replies' },
  { id: 'usage', label: 'Usage' },
];

/** The signed-in frame: the top bar with the sections and the account menu, and the current page. */
export function Layout({ route }: { route: string[] }) {
  const section = route[0] ?? 'chatbots';
  return (
    <div class="shell">
      <header class="topbar">
        <a class="brand" href={href('chatbots')}>
          Switchboard
        </a>
        <nav class="sections" aria-label="Sections">
          {SECTIONS.map(({ id, label }) => (
            <a
              key={id}
              href={href(id)}
              class={section === id ? 'active' : ''}
              aria-current={section === id ? 'page' : undefined}
            >
              {label}
            </a>
          ))}
        </nav>
        <AccountMenu route={route.join('/')} />
      </header>
      <main class="content">{page(route)}</main>
    </div>
  );
}

function page(route: string[]) {
  const [section = 'chatbots', id, ...rest] = route;
  if (section === 'chatbots') return id ? <ChatbotPage chatbotId={id} path={rest} /> : <ChatbotListPage />;
  if (section === 'connections') return <ConnectionsPage />;
  if (section === 'developer') return <ApiKeysPage />;
  if (section === 'agents') return <AgentsPage />;
  if (section === 'canned-replies') return <CannedRepliesPage />;
  if (section === 'usage') return <UsagePage />;
  return (
    <section>
      <h1>Not found</h1>
      <p>
        This page does not exist. <a href={href('chatbots')}>Back to your chatbots</a>
      </p>
    </section>
  );
}
