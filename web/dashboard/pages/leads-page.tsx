import { useEffect } from 'preact/hooks';
import { Loading } from '../components/notice.tsx';
import { formatTime } from '../format.ts';
import { href } from '../router.ts';
import type { Chatbot, Lead, Settings } from '../types.ts';
import { useResource } from '../use-resource.ts';

/**
 * Leads left through the widget, with a column per custom field and a link to each one's
 * conversation, and the CSV export. With a lead id (a conversation's "View lead"), that row is
 * marked and scrolled to.
 */
export function LeadsPage({ chatbot, leadId }: { chatbot: Chatbot; leadId: string | undefined }) {
  const leads = useResource<Lead[]>(`/chatbots/${chatbot.id}/leads`);
  const settings = useResource<Settings>(`/chatbots/${chatbot.id}/settings`);
  const shown = leads.data !== undefined && settings.data !== undefined;
  useEffect(() => {
    if (shown && leadId) document.getElementById(`lead-${leadId}`)?.scrollIntoView({ block: 'center' });
  }, [shown, leadId]);
  if (!leads.data || !settings.data) return <Loading error={leads.error || settings.error} />;
  const columns = settings.data.lead_fields.map((field) => ({ name: field.name, label: field.label }));
  for (const lead of leads.data) {
    for (const name of Object.keys(lead.custom_data)) {
      if (!columns.some((column) => column.name === name)) columns.push({ name, label: name });
    }
  }
  return (
    <div class="card">
      <div class="heading">
        <h2>Leads</h2>
        <a class="button export-csv" href={`/dashboard/api/chatbots/${chatbot.id}/leads.csv`} download>
          Export CSV
        </a>
      </div>
      {leads.data.length === 0 ? (
        <p class="empty">No leads yet. The widget offers its lead form when a visitor asks for a human.</p>
      ) : (
        <div class="table-wrap">
          <table class="leads">
            <thead>
              <tr>
                <th>Name</th>
                <th>Email</th>
                <th>Phone</th>
                {columns.map((column) => (
                  <th key={column.name}>{column.label}</th>
                ))}
                <th>Received</th>
                <th>Conversation</th>
              </tr>
            </thead>
            <tbody>
              {leads.data.map((lead) => (
                <tr
                  key={lead.lead_id}
                  id={`lead-${lead.lead_id}`}
                  class={lead.lead_id === leadId ? 'selected' : undefined}
                  aria-current={lead.lead_id === leadId ? 'true' : undefined}
                >
                  <td data-label="Name">{lead.name}</td>
                  <td data-label="Email">{lead.email}</td>
                  <td data-label="Phone">{lead.phone}</td>
                  {columns.map((column) => (
                    <td key={column.name} data-label={column.label}>
                      {lead.custom_data[column.name] ?? ''}
                    </td>
                  ))}
                  <td data-label="Received">{formatTime(lead.created_at)}</td>
                  <td data-label="Conversation">
                    <a href={href('chatbots', chatbot.id, 'conversations', lead.session_id)}>View conversation</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
