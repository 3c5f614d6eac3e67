import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium, which .ci/run installs with apt-get when missing. */
export const CHROMIUM = '/usr/bin/chromium';

/** Whether headless Chromium can run here; when not, a browser test says why it is skipped. */
export const chromiumMissing = existsSync(CHROMIUM)
  ? false
  : `needs Debian's chromium at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`;

/** Launches headless Chromium with the flags the project's tests always use. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** An owner's web site on its own loopback origin, serving one page that can be set at any time. */
export interface OwnerSite {
  origin: string;
  page: string;
  close(): Promise<void>;
}

/** Starts an {@link OwnerSite} (another origin than the gateway's, as a real embedding is). */
export async function startOwnerSite(): Promise<OwnerSite> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(site.page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const site: OwnerSite = {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    page: '',
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return site;
}
