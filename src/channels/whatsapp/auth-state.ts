import type {
  AuthenticationCreds,
  AuthenticationState,
  SignalDataSet,
  SignalDataTypeMap,
} from '@whiskeysockets/baileys';
import { loadBaileys } from './baileys.ts';
import type { WhatsAppStore } from './whatsapp-store.ts';

/** A linked device's auth state, read from Redis, and how to save its creds after a change. */
export interface RedisAuthState {
  state: AuthenticationState;
  /** Writes the creds as they are now (call it on every `creds.update`). */
  saveCreds: () => Promise<void>;
}

/**
 * Baileys' auth state kept in Redis instead of files (its `useMultiFileAuthState`, one hash field per
 * signal key): creds as one BufferJSON string, every signal key update written in one script, so
 * a restarted gateway — or another one, after the socket's lease moved — resumes without relinking.
 * Writes are fenced by the socket's lease (`holder`): a socket that lost it writes nothing.
 */
export async function redisAuthState(store: WhatsAppStore, chatbotId: string, holder: string): Promise<RedisAuthState> {
  const { BufferJSON, initAuthCreds, proto } = await loadBaileys();
  const saved = await store.readCreds(chatbotId);
  const creds = saved ? (JSON.parse(saved, BufferJSON.reviver) as AuthenticationCreds) : initAuthCreds();
  return {
    state: {
      creds,
      keys: {
        get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
          const values = await store.readKeys(
            chatbotId,
            ids.map((id) => field(String(type), id)),
          );
          const data: Record<string, SignalDataTypeMap[T]> = {};
          ids.forEach((id, index) => {
            const json = values[index];
            if (!json) return;
            let value = JSON.parse(json, BufferJSON.reviver) as SignalDataTypeMap[T];
            if (type === 'app-state-sync-key') {
              value = proto.Message.AppStateSyncKeyData.fromObject(value as object) as unknown as SignalDataTypeMap[T];
            }
            data[id] = value;
          });
          return data;
        },
        set: async (data: SignalDataSet) => {
          const writes: Record<string, string> = {};
          const removals: string[] = [];
          for (const [type, entries] of Object.entries(data)) {
            for (const [id, value] of Object.entries(entries ?? {})) {
              if (value) writes[field(type, id)] = JSON.stringify(value, BufferJSON.replacer);
              else removals.push(field(type, id));
            }
          }
          await store.writeKeys(chatbotId, holder, writes, removals);
        },
      },
    },
    saveCreds: () => store.writeCreds(chatbotId, holder, JSON.stringify(creds, BufferJSON.replacer)),
  };
}

/** The hash field of one signal key (Baileys' own file naming, without the file). */
function field(type: string, id: string): string {
  return `${type}-${id}`;
}
