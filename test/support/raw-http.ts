import { connect } from 'node:net';

/** Sends raw request bytes (with `Connection: close`) and resolves with the raw response bytes. */
export function rawRequest(port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(`${[...lines, 'Connection: close', '', ''].join('\r\n')}`);
  });
}

/** A raw response with the headers that legitimately vary per request (Date, X-Request-Id) masked. */
export function maskVarying(raw: string): string {
  return raw.replace(/^Date: .*$/im, 'Date: *').replace(/^X-Request-Id: .*$/im, 'X-Request-Id: *');
}
