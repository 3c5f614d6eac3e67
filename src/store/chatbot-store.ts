import { randomUUID } from 'node:crypto';
import { applySettingsPatch, parseSettings, retentionOn, type ChatbotSettings } from '../chatbots/chatbot-settings.ts';
import {
  checkFallback,
  checkModel,
  checkName,
  checkProvider,
  checkSystemPrompt,
  DEFAULT_FALLBACK_MESSAGE,
  DEFAULT_MODELS,
  DEFAULT_SYSTEM_PROMPT,
  type Chatbot,
  type ChatbotPatch,
  type NewChatbot,
  type Provider,
} from '../chatbots/chatbot.ts';
import type { Clock } from '../clock.ts';
import { NotFoundError } from '../errors.ts';
import { formatTimestamp } from '../timestamp.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { slugify } from '../chatbots/slug.ts';
import type { RetentionSchedule } from './retention-schedule.ts';

// Claims base, base-2, base-3, … atomically; returns the slug claimed.
const CLAIM_SLUG = new LuaScript<{ keys: [ownerSlugs: string]; args: [baseSlug: string]; reply: string }>(`
local slug = ARGV[1]
local n = 1
while redis.call('SADD', KEYS[1], slug) == 0 do
  n = n + 1
  slug = ARGV[1] .. '-' .. n
end
return slug
`);

// Compare-and-set, so two concurrent changes never lose one another: the loser reads again and
// reapplies its patch. -1 for a deleted chatbot, 0 when the settings changed meanwhile.
const SWAP_SETTINGS = new LuaScript<{
  keys: [chatbot: string];
  args: [settingsRead: string, settings: string];
  reply: -1 | 0 | 1;
}>(`
if redis.call('HGET', KEYS[1], 'deleted') ~= '0' then return -1 end
local current = redis.call('HGET', KEYS[1], 'settings') or ''
if current ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'settings', ARGV[2])
return 1
`);

/** Chatbots: creation with a unique per-owner slug, reads that hide soft-deleted rows, pause, delete. */
export class ChatbotStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  /** Where a chatbot given a retention is scheduled for the gateways' sweeps (none: nothing is swept). */
  private readonly retention: Pick<RetentionSchedule, 'ensure'> | undefined;

  constructor(
    redis: RedisClient,
    keys: RedisKeys,
    clock: Pick<Clock, 'nowMicros'>,
    retention?: Pick<RetentionSchedule, 'ensure'>,
  ) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.retention = retention;
  }

  async create(userId: string, input: NewChatbot): Promise<Chatbot> {
    const name = checkName(input.name);
    const provider = checkProvider(input.provider ?? 'chatgpt');
    const systemPrompt = checkSystemPrompt(input.systemPrompt ?? DEFAULT_SYSTEM_PROMPT);
    const fallback = checkFallback(input.fallbackMessage ?? DEFAULT_FALLBACK_MESSAGE);
    if ((await this.redis.exists(this.keys.user(userId))) === 0) throw new NotFoundError('User not found.');
    const id = randomUUID();
    const createdAt = this.clock.nowMicros();
    const slug = await CLAIM_SLUG.run(this.redis, [this.keys.slugsOf(userId)], [slugify(name)]);
    // Listed before written: a reader skips a listed id without a record, so a crash in between
    // leaves nothing visible.
    await this.redis.zAdd(this.keys.chatbotsOf(userId), { score: createdAt, value: id });
    await this.redis.hSet(this.keys.chatbot(id), {
      id,
      user_id: userId,
      name,
      slug,
      provider,
      model: checkModel(input.model ?? '') || DEFAULT_MODELS[provider],
      is_active: '1',
      deleted: '0',
      created_at: String(createdAt),
      system_prompt: systemPrompt,
      fallback_message: fallback,
    });
    return this.get(id);
  }

  /**
   * Writes a chatbot brought from another install (`import`) for its new owner: its id unless a
   * chatbot (live or deleted) has it here (then a new one), its creation time, its slug unless the
   * owner has it already (then `-2`, `-3` …), and its settings, under the same rules as `create` and
   * `configure`. A retention among them schedules it for the gateways' sweeps.
   */
  async restore(
    userId: string,
    input: NewChatbot & { id: string; slug: string; isActive: boolean; createdAtMicros: number; settings: unknown },
  ): Promise<Chatbot> {
    const name = checkName(input.name);
    const provider = checkProvider(input.provider ?? 'chatgpt');
    const settings = applySettingsPatch(parseSettings(undefined), input.settings);
    const fields = {
      name,
      provider,
      model: checkModel(input.model ?? '') || DEFAULT_MODELS[provider],
      is_active: input.isActive ? '1' : '0',
      deleted: '0',
      created_at: String(input.createdAtMicros),
      system_prompt: checkSystemPrompt(input.systemPrompt ?? DEFAULT_SYSTEM_PROMPT),
      fallback_message: checkFallback(input.fallbackMessage ?? DEFAULT_FALLBACK_MESSAGE),
      settings: JSON.stringify(settings),
    };
    if ((await this.redis.exists(this.keys.user(userId))) === 0) throw new NotFoundError('User not found.');
    const id = (await this.redis.exists(this.keys.chatbot(input.id))) === 0 ? input.id : randomUUID();
    const slug = await CLAIM_SLUG.run(this.redis, [this.keys.slugsOf(userId)], [slugify(input.slug)]);
    await this.schedule(id, settings);
    await this.redis.zAdd(this.keys.chatbotsOf(userId), { score: input.createdAtMicros, value: id });
    await this.redis.hSet(this.keys.chatbot(id), { id, user_id: userId, slug, ...fields });
    await this.schedule(id, settings);
    return this.get(id);
  }

  /** Every live chatbot of the owner, newest first. */
  async listForUser(userId: string): Promise<Chatbot[]> {
    const ids = await this.redis.zRange(this.keys.chatbotsOf(userId), 0, -1, { REV: true });
    const rows = await Promise.all(ids.map((id) => this.redis.hGetAll(this.keys.chatbot(id))));
    return rows.filter((row) => row.id && row.deleted === '0' && row.user_id === userId).map(toChatbot);
  }

  /** A live chatbot of this owner; another owner's, a deleted or an unknown one is not found. */
  async getOwned(userId: string, chatbotId: string): Promise<Chatbot> {
    const chatbot = await this.get(chatbotId);
    if (chatbot.user_id !== userId) throw new NotFoundError('Chatbot not found.');
    return chatbot;
  }

  /** A live chatbot, whoever owns it (operator use). */
  async get(chatbotId: string): Promise<Chatbot> {
    const row = await this.redis.hGetAll(this.keys.chatbot(chatbotId));
    if (!row.id || row.deleted !== '0') throw new NotFoundError('Chatbot not found.');
    return toChatbot(row);
  }

  async setActive(chatbotId: string, active: boolean): Promise<Chatbot> {
    await this.get(chatbotId);
    await this.redis.hSet(this.keys.chatbot(chatbotId), 'is_active', active ? '1' : '0');
    return this.get(chatbotId);
  }

  /**
   * Changes some of the chatbot's widget, lead-form, escalation, answer, office-hours and retention
   * settings; returns them all. A chatbot given a retention is scheduled for the gateways' sweeps.
   */
  async configure(chatbotId: string, patch: unknown): Promise<ChatbotSettings> {
    for (;;) {
      const [read, deleted] = await this.redis.hmGet(this.keys.chatbot(chatbotId), ['settings', 'deleted']);
      if (deleted !== '0') throw new NotFoundError('Chatbot not found.');
      const stored = read ?? '';
      const current = parseSettings(stored || undefined);
      const next = applySettingsPatch(current, patch);
      await this.schedule(chatbotId, next);
      const swapped = await SWAP_SETTINGS.run(
        this.redis,
        [this.keys.chatbot(chatbotId)],
        [stored, JSON.stringify(next)],
      );
      if (swapped === -1) throw new NotFoundError('Chatbot not found.');
      if (swapped === 1) {
        await this.schedule(chatbotId, next);
        return next;
      }
    }
  }

  /**
   * Schedules the chatbot's retention sweeps when its settings have a retention. Called before its
   * settings are written, so that a failure in between leaves nothing unswept (a sweep that finds no
   * retention set lets go of it), and again after: a gateway that polled in between found no retention
   * and let go of it.
   */
  private async schedule(chatbotId: string, settings: ChatbotSettings): Promise<void> {
    if (retentionOn(settings)) await this.retention?.ensure(chatbotId, this.clock.nowMicros());
  }

  /**
   * Changes the chatbot's name, provider and model, system prompt or fallback message, under the same
   * rules as `create` (a new provider without a model takes that provider's default model). The slug
   * stays: it is how the chatbot is addressed.
   */
  async update(chatbotId: string, patch: ChatbotPatch): Promise<Chatbot> {
    const current = await this.get(chatbotId);
    const fields: Record<string, string> = {};
    if (patch.name !== undefined) fields.name = checkName(patch.name);
    const provider = patch.provider !== undefined ? checkProvider(patch.provider) : current.provider;
    if (patch.provider !== undefined) fields.provider = provider;
    const model = patch.model !== undefined ? checkModel(patch.model) : undefined;
    if (model) fields.model = model;
    else if (model === '' || provider !== current.provider) fields.model = DEFAULT_MODELS[provider];
    if (patch.systemPrompt !== undefined) fields.system_prompt = checkSystemPrompt(patch.systemPrompt);
    if (patch.fallbackMessage !== undefined) fields.fallback_message = checkFallback(patch.fallbackMessage);
    if (patch.isActive !== undefined) fields.is_active = patch.isActive ? '1' : '0';
    if (Object.keys(fields).length > 0) await this.redis.hSet(this.keys.chatbot(chatbotId), fields);
    return this.get(chatbotId);
  }

  /** Soft delete: the record stays for the audit trail; reads, the listing and the slug let go of it. */
  async softDelete(chatbotId: string): Promise<void> {
    const chatbot = await this.get(chatbotId);
    await this.redis.hSet(this.keys.chatbot(chatbotId), {
      deleted: '1',
      deleted_at: String(this.clock.nowMicros()),
    });
    await this.redis.zRem(this.keys.chatbotsOf(chatbot.user_id), chatbotId);
    await this.redis.sRem(this.keys.slugsOf(chatbot.user_id), chatbot.slug);
  }
}

function toChatbot(row: Record<string, string>): Chatbot {
  return {
    id: row.id!,
    user_id: row.user_id!,
    name: row.name!,
    slug: row.slug!,
    provider: row.provider as Provider,
    model: row.model!,
    is_active: row.is_active === '1',
    created_at: formatTimestamp(Number(row.created_at)),
    system_prompt: row.system_prompt!,
    fallback_message: row.fallback_message!,
    settings: parseSettings(row.settings),
  };
}
