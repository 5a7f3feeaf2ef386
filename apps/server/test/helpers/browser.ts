import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_ARGS, toolPath } from './tools.js';

/** Chromium (found as {@link toolPath} finds it), headless, with the switches every browser test uses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: toolPath('chromium') as string,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

/**
 * An application's redirect URI on loopback: its page shows `heading` and the URL it was called
 * with (`#url`, escaped), as a relying party that received the code would.
 */
export async function startRelyingParty(
  heading: string,
): Promise<{ callback: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><title>Relying party</title><h1>${heading}</h1><p id="url">${request.url?.replace(/[<>&"]/g, '')}</p>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    callback: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
