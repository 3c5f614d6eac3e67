import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

/** Where browser tests leave their screenshots (ignored by git), and the copies the README shows. */
export const SHOTS = path.resolve(import.meta.dirname, '../../.tap/screenshots');
const README_SHOTS = path.resolve(import.meta.dirname, '../../docs/screenshots');

/**
 * Saves a viewport screenshot of a page for the run (`<prefix>-<name>.png`: a dashboard page unless
 * told); with README_SCREENSHOTS=1 it also replaces the docs' copy (the pages show ports and times, so
 * every run would change them).
 */
export async function readmeScreenshot(page: Page, name: string, prefix = 'dashboard'): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const file = path.join(SHOTS, `${prefix}-${name}.png`);
  await page.screenshot({ path: file });
  if (process.env.README_SCREENSHOTS !== '1') return;
  mkdirSync(README_SHOTS, { recursive: true });
  copyFileSync(file, path.join(README_SHOTS, `${prefix}-${name}.png`));
}
