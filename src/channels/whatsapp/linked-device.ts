import type { Clock } from '../../clock.ts';
import type { BaileysEventMap } from '@whiskeysockets/baileys';
import { baileys } from './baileys.ts';
import type { Logger } from '../../logger.ts';
import type { WhatsAppConnection, WhatsAppStore } from './whatsapp-store.ts';
import { redisAuthState, type RedisAuthState } from './auth-state.ts';
import { LeaseKeeper } from '../lease-keeper.ts';
import { RECONNECT_FIRST_MS, RECONNECT_MAX_MS } from './rules.ts';
import { WhatsAppOutbound } from './outbound.ts';
import type { WhatsAppSocket, WhatsAppSocketFactory } from './socket.ts';

/** What a linked device needs. */
export interface LinkedDeviceDeps {
  store: WhatsAppStore;
  socketFactory: WhatsAppSocketFactory;
  logger: Logger;
  clock: Clock;
  /** This process, as a lease holder. */
  holder: string;
  leaseMs: number;
  /** The first reconnect delay (doubling up to a minute); shortened in tests. */
  reconnectFirstMs?: number;
  /** Live messages from the socket, for the channel to take in. */
  onMessages(device: LinkedDevice, upsert: BaileysEventMap['messages.upsert']): void;
}

/** Why a disconnect unlinks the device until the owner links it again; undefined for any other. */
function finalReason(status: number | undefined): string | undefined {
  const { DisconnectReason } = baileys();
  if (status === DisconnectReason.loggedOut) return 'logged out from the phone';
  if (status === DisconnectReason.forbidden) return 'WhatsApp refused the account';
  return undefined;
}

/**
 * One chatbot's WhatsApp socket, run by at most one gateway process at a time: the process that
 * holds the socket's lease in Redis connects (from the auth state in Redis), renews the lease, and
 * reconnects as the disconnect reason says; the others wait and take over when the lease lapses.
 */
export class LinkedDevice {
  readonly chatbotId: string;
  private readonly deps: LinkedDeviceDeps;
  private readonly lease: LeaseKeeper;
  private retry: NodeJS.Timeout | undefined;
  private socket: WhatsAppSocket | undefined;
  private outbound: WhatsAppOutbound | undefined;
  private isOpen = false;
  private reconnectMs: number;
  private connecting: Promise<void> | undefined;
  private stopped = false;
  /** Whether this process held the socket's lease at the last renewal. */
  private holding = false;
  /** Sends waiting for the socket to open again, woken when it opens or this process lets it go. */
  private readonly waiting = new Set<() => void>();

  constructor(chatbotId: string, deps: LinkedDeviceDeps) {
    this.chatbotId = chatbotId;
    this.deps = deps;
    this.reconnectMs = deps.reconnectFirstMs ?? RECONNECT_FIRST_MS;
    this.lease = new LeaseKeeper({
      clock: deps.clock,
      ttlMs: deps.leaseMs,
      hold: () => deps.store.holdSocket(chatbotId, deps.holder, deps.leaseMs),
      release: () => deps.store.releaseSocket(chatbotId, deps.holder),
      onHeld: (held) => this.held(held),
      onError: (error) => this.log().warn({ err: error }, 'whatsapp socket lease'),
    });
  }

  start(): void {
    this.lease.start();
  }

  /** Closes the socket (unlinking the device from the phone with `logout`) and lets go of the lease. */
  async stop(options: { logout?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.lease.stop();
    await this.connecting;
    if (options.logout && this.socket && this.isOpen) {
      await this.socket.logout().catch((error: unknown) => this.log().warn({ err: error }, 'whatsapp logout failed'));
    }
    this.close();
    this.holding = false;
    this.wake();
    await this.lease.release();
  }

  /** The socket's sender, while this process has the socket open. */
  sender(): WhatsAppOutbound | undefined {
    return this.isOpen ? this.outbound : undefined;
  }

  /** Whether this process runs the socket: it holds the lease (the socket may be reconnecting). */
  runsSocket(): boolean {
    return this.holding && !this.stopped;
  }

  /**
   * The sender once the socket is open: at once when it is, after a reconnect in this process when it
   * comes within `timeoutMs`, else undefined (this process does not run the socket, or it stayed closed).
   */
  async whenOpen(timeoutMs: number): Promise<WhatsAppOutbound | undefined> {
    if (this.isOpen || !this.runsSocket()) return this.sender();
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, timeoutMs);
      this.waiting.add(wake);
    });
    return this.sender();
  }

  private held(held: boolean): void {
    this.holding = held;
    if (!held) this.wake();
    if (held && !this.socket && !this.retry && !this.connecting) this.connect();
    else if (!held && this.socket) this.close();
  }

  private connect(): void {
    this.connecting = this.openSocket().catch((error: unknown) => {
      this.log().error({ err: error }, 'whatsapp socket could not start');
      this.scheduleReconnect();
    });
    void this.connecting.finally(() => (this.connecting = undefined));
  }

  private async openSocket(): Promise<void> {
    const connection = await this.deps.store.find(this.chatbotId);
    if (!connection || connection.state === 'unlinked' || this.stopped) return;
    const auth = await redisAuthState(this.deps.store, this.chatbotId, this.deps.holder);
    const socket = this.deps.socketFactory({ auth: auth.state, logger: this.log() });
    this.socket = socket;
    this.outbound = new WhatsAppOutbound(socket);
    let pairingAsked = false;
    socket.ev.on('creds.update', () => {
      if (this.socket === socket)
        void auth.saveCreds().catch((error: unknown) => this.log().error({ err: error }, 'whatsapp creds'));
    });
    socket.ev.on('messages.upsert', (upsert) => {
      if (this.socket === socket) this.deps.onMessages(this, upsert);
    });
    socket.ev.on('connection.update', (update) => {
      if (this.socket !== socket) return;
      if (update.qr) {
        const asked = connection.phone !== null && !pairingAsked;
        pairingAsked ||= asked;
        void this.showCode(socket, connection, update.qr, asked);
      }
      if (update.connection === 'open') void this.opened(auth);
      if (update.connection === 'close') void this.closed(statusOf(update.lastDisconnect?.error), connection);
    });
  }

  /** A QR code to scan, or (the first time, with a phone number) a pairing code to enter. */
  private async showCode(socket: WhatsAppSocket, connection: WhatsAppConnection, qr: string, pair: boolean) {
    try {
      if (pair)
        await this.deps.store.linkProgress(this.chatbotId, {
          pairingCode: await socket.requestPairingCode(connection.phone!),
        });
      else if (connection.phone === null) await this.deps.store.linkProgress(this.chatbotId, { qr });
    } catch (error) {
      this.log().error({ err: error }, 'whatsapp linking code');
    }
  }

  private async opened(auth: RedisAuthState): Promise<void> {
    this.isOpen = true;
    this.wake();
    this.reconnectMs = this.deps.reconnectFirstMs ?? RECONNECT_FIRST_MS;
    const jid = auth.state.creds.me?.id ? baileys().jidNormalizedUser(auth.state.creds.me.id) : '';
    await this.deps.store
      .linked(this.chatbotId, jid)
      .catch((error: unknown) => this.log().error({ err: error }, 'whatsapp link state'));
    this.log().info({ jid }, 'whatsapp connected');
  }

  private async closed(status: number | undefined, connection: WhatsAppConnection): Promise<void> {
    this.close();
    const { DisconnectReason } = baileys();
    const final = finalReason(status);
    const expired = status === DisconnectReason.timedOut && connection.state === 'linking';
    if (final || expired) {
      const reason = final ?? `the ${connection.phone ? 'pairing' : 'QR'} code was not used in time`;
      this.log().error({ reason }, 'whatsapp unlinked: link it again with `switchboard channel whatsapp`');
      await this.deps.store
        .unlinked(this.chatbotId, reason)
        .catch((error: unknown) => this.log().error({ err: error }, 'whatsapp link state'));
      return;
    }
    // WhatsApp asks for a restart right after linking: reconnect at once, with the new creds.
    if (status === DisconnectReason.restartRequired) this.connect();
    else this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retry) return;
    const delay = this.reconnectMs;
    this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MAX_MS);
    this.log().warn({ delay_ms: delay }, 'whatsapp disconnected; reconnecting');
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.lease.renew();
    }, delay);
    this.retry.unref();
  }

  /** Forgets the socket first, so that its own `close` event is not taken for a dropped connection. */
  private close(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    const socket = this.socket;
    this.socket = undefined;
    this.outbound = undefined;
    this.isOpen = false;
    // Ending a socket that is already gone may fail; it is dropped either way, so that is only logged.
    if (socket) {
      void Promise.resolve(socket.end(undefined)).catch((error: unknown) =>
        this.log().debug({ err: error }, 'whatsapp socket end'),
      );
    }
  }

  /** Wakes the sends waiting for the socket: it opened, or this process no longer runs it. */
  private wake(): void {
    for (const wake of [...this.waiting]) wake();
  }

  private log(): Logger {
    return this.deps.logger.child({ channel: 'whatsapp', chatbot_id: this.chatbotId });
  }
}

/** The disconnect's status code (Baileys closes with a Boom error carrying it). */
function statusOf(error: unknown): number | undefined {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output;
  return typeof output?.statusCode === 'number' ? output.statusCode : undefined;
}
