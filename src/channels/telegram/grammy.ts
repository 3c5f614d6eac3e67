import type * as AutoRetryModule from '@grammyjs/auto-retry';
import type * as GrammyModule from 'grammy';
import { lazyModule } from '../../lazy-module.ts';

/** grammY with its auto-retry plugin. */
export type Grammy = typeof GrammyModule & Pick<typeof AutoRetryModule, 'autoRetry'>;

// Loaded the first time a Telegram bot is checked, run or written to: the CLI's other commands and a
// gateway without a Telegram bot never need it (about 60 ms of start-up).
const library = lazyModule<Grammy>('grammY', async () => {
  const [grammy, { autoRetry }] = await Promise.all([import('grammy'), import('@grammyjs/auto-retry')]);
  return { ...grammy, autoRetry };
});

export function loadGrammy(): Promise<Grammy> {
  return library.load();
}
