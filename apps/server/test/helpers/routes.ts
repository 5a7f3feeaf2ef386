import type { FastifyInstance } from 'fastify';

/** Every route of `app` as [method, path] (HEAD routes fastify adds for GET are left out). */
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
