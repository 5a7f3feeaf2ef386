import type { FastifyReply } from 'fastify';
import { messagePage } from '../views/message.js';

/**
 * Sends an HTML page with the headers every page gets: no caching (pages carry CSRF tokens), no
 * framing (clickjacking on the login and consent forms), no referrer (URLs carry interaction ids),
 * and a policy that allows only our stylesheet. No `form-action`: after a form, the server
 * redirects to the client, which browsers would check against it.
 */
export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
    .header('X-Frame-Options', 'DENY')
    .header('Referrer-Policy', 'no-referrer')
    .send(body);
}

/** Route options of a page a browser navigates to: its errors are pages too. */
export const PAGE_ROUTE = { config: { errorFormat: 'html' } } as const;

/** Where the pages of the issuer find their stylesheet: `<issuer path>/assets`. */
export function assetsPathOf(issuer: string): string {
  return `${new URL(issuer).pathname}/assets`;
}

/** Sends a page that shows an error to the person in front of the browser. */
export function sendErrorPage(
  reply: FastifyReply,
  status: number,
  page: { assetsPath: string; title: string; message: string },
): FastifyReply {
  return sendPage(reply, status, messagePage({ ...page, alert: true }));
}
