import type { FastifyReply } from 'fastify';

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
