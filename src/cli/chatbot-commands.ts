import type { Command } from 'commander';
import { chatbotDetailView, chatbotListView } from '../views.ts';
import type { SettingsPatch } from '../chatbots/chatbot-settings.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { Services } from '../services.ts';
import { CliError, onOff, runCommand, type CommandContext } from './cli-runtime.ts';
import { providerWarning } from './doctor.ts';

interface CreateOptions {
  user: string;
  name: string;
  provider?: string;
  model?: string;
  systemPrompt?: string;
  fallbackMessage?: string;
}

interface ConfigureOptions {
  bot: string;
  allowedOrigins?: string;
  leadFields?: string;
  cta?: string;
  escalationRules?: string;
  title?: string;
  color?: string;
  welcomeMessage?: string;
  queryRewrite?: string;
  citations?: string;
  apiCitations?: string;
  sourcesOnly?: string;
  officeHours?: string;
  retentionDays?: string;
  leadRetentionDays?: string;
}

/** `bot create|update|pause|resume|delete|configure`. */
export function registerChatbotCommands(program: Command): void {
  const bot = program.command('bot').description('chatbots');
  bot
    .command('create')
    .requiredOption('--user <id>', 'owner account id')
    .requiredOption('--name <name>', 'display name')
    .option('--provider <provider>', 'gemini, chatgpt or ollama')
    .option('--model <model>', 'provider model name')
    .option('--system-prompt <text>', 'persona / system prompt')
    .option('--fallback-message <text>', 'reply when the LLM cannot answer')
    .action((opts: CreateOptions) =>
      runCommand(async (s, context) => {
        const created = await s.chatbots.create(opts.user, {
          name: opts.name,
          provider: opts.provider,
          model: opts.model,
          systemPrompt: opts.systemPrompt,
          fallbackMessage: opts.fallbackMessage,
        });
        await warnOfProvider(s, created, context);
        return chatbotDetailView(created);
      }),
    );
  bot
    .command('list')
    .description("an owner's chatbots, as the API lists them")
    .requiredOption('--user <id>', 'owner account id')
    .action((opts: { user: string }) =>
      runCommand(async (s) => {
        await s.accounts.get(opts.user);
        return (await s.chatbots.listForUser(opts.user)).map(chatbotListView);
      }),
    );
  bot
    .command('update')
    .description("change a chatbot's name, provider, model, system prompt or fallback message")
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--name <name>', 'display name')
    .option('--provider <provider>', "gemini, chatgpt or ollama (the model becomes the provider's default)")
    .option('--model <model>', 'provider model name ("" for the default)')
    .option('--system-prompt <text>', 'persona / system prompt')
    .option('--fallback-message <text>', 'reply when the LLM cannot answer')
    .action((opts: Omit<CreateOptions, 'user' | 'name'> & { bot: string; name?: string }) =>
      runCommand(async (s, context) => {
        const { bot: id, ...patch } = opts;
        const updated = await s.chatbots.update(id, patch);
        await warnOfProvider(s, updated, context);
        return chatbotDetailView(updated);
      }),
    );
  for (const [name, active] of [
    ['pause', false],
    ['resume', true],
  ] as const) {
    bot
      .command(name)
      .requiredOption('--bot <id>', 'chatbot id')
      .action((opts: { bot: string }) =>
        runCommand(async (s) => chatbotDetailView(await s.chatbots.setActive(opts.bot, active))),
      );
  }
  bot
    .command('delete')
    .requiredOption('--bot <id>', 'chatbot id')
    .action((opts: { bot: string }) =>
      runCommand(async (s) => {
        await s.chatbotDeletion.delete(opts.bot);
        return { id: opts.bot, deleted: true };
      }),
    );
  bot
    .command('configure')
    .description(
      'widget, lead form, escalation, retrieval, answer, office-hours and retention settings; prints them all (with no option: unchanged)',
    )
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--allowed-origins <list>', 'comma-separated origins allowed to embed the widget ("" = any)')
    .option('--lead-fields <fields>', 'custom lead-form fields: "name:Label[*],…" (* = required) or a JSON array')
    .option(
      '--cta <json>',
      'call-to-action buttons: JSON array of {id,label,action:link|escalate|message,url?,message?}',
    )
    .option('--escalation-rules <json>', 'JSON {"smart_intent":bool,"keywords":[…],"fallback_streak":N}')
    .option('--title <text>', 'widget title (default: the chatbot name)')
    .option('--color <hex>', 'widget colour, e.g. #2563eb')
    .option('--welcome-message <text>', 'first message the widget shows')
    .option(
      '--query-rewrite <on|off>',
      "rewrite each message with the chatbot's LLM before retrieving (one more LLM call per message; default off)",
    )
    .option('--citations <on|off>', 'answers cite their sources as [1], [2]: chips in the widget (default on)')
    .option('--api-citations <on|off>', 'REST API replies keep [1] markers and list their sources (default off)')
    .option(
      '--office-hours <json>',
      'JSON {"enabled":bool,"time_zone":"Europe/Berlin","weekly":{"mon":[["09:00","17:00"]],…},' +
        '"holidays":["2026-12-25"],"contact_after_minutes":N}, replaced whole',
    )
    .option(
      '--sources-only <on|off>',
      'nothing relevant in the sources: reply with the fallback message and offer a human, no LLM (default off)',
    )
    .option(
      '--retention-days <n|off>',
      'delete conversations inactive for more than N days (the gateways sweep hourly); off keeps them',
    )
    .option('--lead-retention-days <n|off>', 'delete leads captured more than N days ago; off keeps them')
    .action((opts: ConfigureOptions) =>
      runCommand(async (s) => {
        const settings = await s.chatbots.configure(opts.bot, settingsPatch(opts));
        return { chatbot_id: opts.bot, ...settings };
      }),
    );
}

function settingsPatch(opts: ConfigureOptions): SettingsPatch {
  const patch: Record<string, unknown> = {};
  if (opts.allowedOrigins !== undefined) patch.allowed_origins = list(opts.allowedOrigins);
  if (opts.leadFields !== undefined) patch.lead_fields = leadFields(opts.leadFields);
  if (opts.cta !== undefined) patch.ctas = json('--cta', opts.cta);
  if (opts.escalationRules !== undefined) patch.escalation = json('--escalation-rules', opts.escalationRules);
  const widget: Record<string, string> = {};
  if (opts.title !== undefined) widget.title = opts.title;
  if (opts.color !== undefined) widget.color = opts.color;
  if (opts.welcomeMessage !== undefined) widget.welcome_message = opts.welcomeMessage;
  if (Object.keys(widget).length > 0) patch.widget = widget;
  if (opts.queryRewrite !== undefined) patch.retrieval = { query_rewrite: onOff('--query-rewrite', opts.queryRewrite) };
  const answers: Record<string, boolean> = {};
  if (opts.citations !== undefined) answers.citations = onOff('--citations', opts.citations);
  if (opts.apiCitations !== undefined) answers.api_citations = onOff('--api-citations', opts.apiCitations);
  if (opts.sourcesOnly !== undefined) answers.sources_only = onOff('--sources-only', opts.sourcesOnly);
  if (Object.keys(answers).length > 0) patch.answers = answers;
  if (opts.officeHours !== undefined) patch.hours = json('--office-hours', opts.officeHours);
  const retention: Record<string, number | null> = {};
  if (opts.retentionDays !== undefined) retention.conversations_days = days('--retention-days', opts.retentionDays);
  if (opts.leadRetentionDays !== undefined) {
    retention.leads_days = days('--lead-retention-days', opts.leadRetentionDays);
  }
  if (Object.keys(retention).length > 0) patch.retention = retention;
  return patch;
}

/** A number of days, or `off` (null: kept for ever); the settings' rules check the number. */
function days(option: string, value: string): number | null {
  if (value === 'off') return null;
  if (!/^\d+$/.test(value)) throw new CliError(`${option} must be a number of days or off`);
  return Number(value);
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** `company:Company*,size:Team size` or a JSON array of {name,label,required}. */
function leadFields(value: string): unknown {
  if (value.trim().startsWith('[')) return json('--lead-fields', value);
  return list(value).map((entry) => {
    const [name = '', ...rest] = entry.split(':');
    const label = rest.join(':').trim() || name;
    const required = label.endsWith('*');
    return { name: name.trim(), label: required ? label.slice(0, -1).trim() : label, required };
  });
}

function json(option: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new CliError(`${option} must be JSON: ${(error as Error).message}`);
  }
}

/** A chatbot on a provider the gateways cannot call is made or kept, with a warning that says so. */
async function warnOfProvider(s: Services, chatbot: Chatbot, context: CommandContext): Promise<void> {
  const warning = providerWarning(chatbot, await s.gateways.setup());
  if (warning) context.warn(warning);
}
