import type { Services } from '../../src/services.ts';

// Kept apart from gateway-cluster.ts, whose webhook receiver loads tap: benchmarks use this too.

/** A Scale-plan owner with one API key and one chatbot, made through a service layer. */
export async function scaleOwnerWithBot(services: Services, name: string) {
  const owner = await services.accounts.create(`${name.toLowerCase().replace(/\W+/g, '-')}@example.com`, 'scale');
  const { key } = await services.apiKeys.create(owner.id, 'load');
  const bot = await services.chatbots.create(owner.id, { name });
  return { owner, key, bot };
}
