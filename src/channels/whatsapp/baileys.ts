import type * as BaileysModule from '@whiskeysockets/baileys';
import { lazyModule } from '../../lazy-module.ts';

/** The Baileys library, as its module. */
export type Baileys = typeof BaileysModule;

// Loaded the first time a linked device needs it. Most gateways never link a WhatsApp device (or use
// the Cloud API), and Baileys with its protobufs is 15.5 MB of a gateway's 64 MB heap: every major
// garbage collection marks it again, which lengthens the chat path's tail.
const library = lazyModule<Baileys>('Baileys', () => import('@whiskeysockets/baileys'));

/** Loads Baileys (once; a failed import is tried again at the next connect). */
export function loadBaileys(): Promise<Baileys> {
  return library.load();
}

/**
 * Baileys, once loadBaileys has loaded it: what a linked device does with its socket (its events,
 * its auth state) comes after the device loaded it to connect.
 */
export function baileys(): Baileys {
  return library.loaded();
}
