import type { LookupAddress } from 'node:dns';
import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP, Socket, type NetConnectOpts } from 'node:net';
import type { Egress } from '../../src/net/ssrf-guard.ts';

type Lookup = (
  hostname: string,
  options: { all?: boolean },
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

type ConnectOptions = NetConnectOpts & { host?: string; port?: number; lookup?: Lookup };

/**
 * A socket to 127.0.0.1 at the URL's port, opened once the lookup got was given (the SSRF guard's)
 * has approved the host. A destination the guard lets through therefore reaches a loopback server of
 * the test whatever address it names: a leak cannot go unnoticed, a public-looking fake (a name
 * resolving to a public address) can be served from this machine, and nothing leaves it (https is
 * spoken as plain HTTP to a loopback port, so it fails there).
 */
function loopbackConnection(options: ConnectOptions): Socket {
  const socket = new Socket();
  const connect = () => socket.connect({ host: '127.0.0.1', port: options.port ?? 80 });
  const host = (options.host ?? '').replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 || !options.lookup) setImmediate(connect);
  else options.lookup(host, { all: true }, (error) => (error ? socket.destroy(error) : connect()));
  return socket;
}

class LoopbackAgent extends Agent {
  override createConnection(options: ConnectOptions): Socket {
    return loopbackConnection(options);
  }
}

class LoopbackHttpsAgent extends HttpsAgent {
  override createConnection(options: ConnectOptions): Socket {
    return loopbackConnection(options);
  }
}

/**
 * A fake resolver with a fixed table (names are matched as DNS would: case-insensitively, with or
 * without the final dot; an unknown name is ENOTFOUND), and agents that land every connection on
 * loopback.
 */
export function fakeEgress(table: Record<string, string[]>): Egress & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    agents: { http: new LoopbackAgent({ keepAlive: false }), https: new LoopbackHttpsAgent({ keepAlive: false }) },
    resolve: async (hostname) => {
      const name = hostname.toLowerCase().replace(/\.$/, '');
      asked.push(name);
      const addresses = table[name];
      if (!addresses) {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
      }
      return addresses.map((address) => ({ address, family: isIP(address) }));
    },
  };
}

/** A loopback HTTP server that counts every connection and request it gets (a canary, a redirector). */
export class CountingServer {
  connections = 0;
  readonly requests: Array<{ host: string; path: string }> = [];
  port = 0;
  private readonly server: Server;

  constructor(answer: (req: IncomingMessage, res: ServerResponse) => void) {
    this.server = createServer((req, res) => {
      this.requests.push({ host: req.headers.host ?? '', path: req.url ?? '' });
      answer(req, res);
    });
    this.server.on('connection', () => (this.connections += 1));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
