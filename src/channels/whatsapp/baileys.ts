import type * as BaileysModule from '@whiskeysockets/baileys';

/** The Baileys library, as its module. */
export type Baileys = typeof BaileysModule;

let loaded: Baileys | undefined;
let loading: Promise<Baileys> | undefined;

/**
 * Loads Baileys the first time a linked device needs it. Most gateways never link a WhatsApp
 * device (or use the Cloud API), and Baileys with its protobufs is 15.5 MB of a gateway's 64 MB
 * heap: every major garbage collection marks it again, which lengthens the chat path's tail.
 */
export function loadBaileys(): Promise<Baileys> {
  loading ??= import('@whiskeysockets/baileys').then(
    (module) => (loaded = module),
    (error: unknown) => {
      loading = undefined; // the next connect tries again
      throw error;
    },
  );
  return loading;
}

/**
 * Baileys, once loadBaileys has loaded it: what a linked device does with its socket (its events,
 * its auth state) comes after the device loaded it to connect.
 */
export function baileys(): Baileys {
  if (!loaded) throw new Error('Baileys is used before loadBaileys() loaded it');
  return loaded;
}
