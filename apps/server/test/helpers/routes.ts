import type { FastifyInstance } from 'fastify';

/**
 * Every route of `app` as [method, path], walked from its router so that a route added later is
 * covered by the suites that use this without anyone remembering to add it (HEAD routes fastify
 * adds for GET are left out).
 * @example for (const [method, path] of registeredRoutes(app)) await app.inject({ method, url: path });
 */
export function registeredRoutes(app: FastifyInstance): Array<[string, string]> {
  const routes: Array<[string, string]> = [];
  const prefixes: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (match === null) continue;
    const depth = (match[1] ?? '').length / 4;
    const path = (prefixes[depth - 1] ?? '') + (match[2] ?? '');
    prefixes[depth] = path;
    prefixes.length = depth + 1;
    for (const method of (match[3] ?? '').split(', ').filter((m) => m !== '' && m !== 'HEAD'))
      routes.push([method, path]);
  }
  return routes;
}
