import type { Command } from 'commander';
import { chatbotDetailView, chatbotListView } from '../views.ts';
import type { SettingsPatch } from '../chatbots/chatbot-settings.ts';
import { CliError, runCommand } from './cli-runtime.ts';

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
      runCommand(async (s) => {
        const created = await s.chatbots.create(opts.user, {
          name: opts.name,
          provider: opts.provider,
          model: opts.model,
          systemPrompt: opts.systemPrompt,
          fallbackMessage: opts.fallbackMessage,
        });
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
      runCommand(async (s) => {
        const { bot: id, ...patch } = opts;
        return chatbotDetailView(await s.chatbots.update(id, patch));
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
    .description('widget, lead form, escalation and retrieval settings; prints them all (with no option: unchanged)')
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
  return patch;
}

function onOff(option: string, value: string): boolean {
  if (value === 'on' || value === 'off') return value === 'on';
  throw new CliError(`${option} must be on or off`);
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
