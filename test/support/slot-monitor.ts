import { createClient } from 'redis';

/** Commands one script run or one transaction executed, each as its arguments (name first). */
export interface CommandGroup {
  kind: 'script' | 'transaction';
  /** The script's SHA1 (EVALSHA) or source (EVAL); empty for transactions. */
  script: string;
  commands: string[][];
}

/** A script run or a transaction whose keys fall in more than one hash slot. */
export interface SlotViolation {
  group: CommandGroup;
  slots: Record<string, number>;
}

/** Commands that name no key, skipped without asking the server. */
const KEYLESS = new Set(['multi', 'exec', 'discard', 'ping', 'publish', 'spublish', 'time', 'info', 'echo']);

/**
 * Watches a Redis server with MONITOR and groups what it runs into script runs (the EVAL/EVALSHA line
 * and every command the script ran, `[0 lua]` lines included: a script may touch keys it did not
 * declare) and transactions (a client's commands between its MULTI and EXEC). Keys are found with
 * COMMAND GETKEYS and slots with CLUSTER KEYSLOT, so the server decides both.
 */
export class SlotMonitor {
  readonly groups: CommandGroup[] = [];
  /** How often each command was run by a client (not from inside a script), by lowercase name. */
  readonly counts = new Map<string, number>();
  /** Commands whose keys the server could not tell (COMMAND GETKEYS refused them), as run. */
  readonly unreadable: string[][] = [];
  private readonly monitor: ReturnType<typeof createClient>;
  private readonly asker: ReturnType<typeof createClient>;
  private script: CommandGroup | undefined;
  private readonly transactions = new Map<string, CommandGroup>();

  private constructor(url: string) {
    this.monitor = createClient({ url });
    this.asker = createClient({ url });
  }

  static async start(url: string): Promise<SlotMonitor> {
    const watcher = new SlotMonitor(url);
    await watcher.asker.connect();
    await watcher.monitor.connect();
    await watcher.monitor.monitor((line: string) => watcher.take(line));
    return watcher;
  }

  async stop(): Promise<void> {
    this.monitor.destroy();
    this.asker.destroy();
  }

  /** Every script run or transaction that touched keys of more than one slot. */
  async violations(): Promise<SlotViolation[]> {
    const found: SlotViolation[] = [];
    const slotOf = new Map<string, number>();
    for (const group of this.groups) {
      const slots: Record<string, number> = {};
      for (const command of group.commands) {
        for (const key of await this.keysOf(command)) {
          if (!slotOf.has(key)) slotOf.set(key, Number(await this.asker.sendCommand(['CLUSTER', 'KEYSLOT', key])));
          slots[key] = slotOf.get(key)!;
        }
      }
      if (new Set(Object.values(slots)).size > 1) found.push({ group, slots });
    }
    return found;
  }

  private async keysOf(command: string[]): Promise<string[]> {
    const name = command[0]!.toLowerCase();
    if (KEYLESS.has(name)) return [];
    if (name === 'evalsha' || name === 'eval') return command.slice(3, 3 + Number(command[2]));
    try {
      return await this.asker.sendCommand<string[]>(['COMMAND', 'GETKEYS', ...command]);
    } catch {
      this.unreadable.push(command);
      return [];
    }
  }

  private take(line: string): void {
    const match = /^\d+\.\d+ \[\d+ ([^\]]+)\] (.*)$/.exec(line);
    if (!match) return;
    const [, source, rest] = match as unknown as [string, string, string];
    const command = parseArguments(rest);
    const name = command[0]?.toLowerCase() ?? '';
    if (source === 'lua') {
      this.script?.commands.push(command);
      return;
    }
    this.script = undefined;
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    const open = this.transactions.get(source);
    if (name === 'multi') {
      this.transactions.set(source, { kind: 'transaction', script: '', commands: [] });
      return;
    }
    if (open) {
      if (name === 'exec' || name === 'discard') {
        this.transactions.delete(source);
        this.groups.push(open);
      } else {
        open.commands.push(command);
        if (name === 'evalsha' || name === 'eval') this.script = open;
      }
      return;
    }
    if (name === 'evalsha' || name === 'eval') {
      this.script = { kind: 'script', script: command[1]!, commands: [command] };
      this.groups.push(this.script);
    }
  }
}

/** Splits MONITOR's quoted arguments (`"set" "k" "a\"b\x00"`), undoing Redis's escapes. */
export function parseArguments(text: string): string[] {
  const args: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"/g;
  for (const [, body] of text.matchAll(pattern)) {
    args.push(
      body!.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_, escape: string) => {
        if (escape.startsWith('x') && escape.length === 3) return String.fromCharCode(parseInt(escape.slice(1), 16));
        return ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[escape] ?? escape;
      }),
    );
  }
  return args;
}
