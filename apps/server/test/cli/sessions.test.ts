import { GrantInfo, SessionInfo } from '@idgate/schema';
import { createIdgateClient, type IdgateClient, IdgateHttpError } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BROWSER, browser, signInTo, webApplication } from '../admin/sign-ins.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { assertBuilt, envFor, errorLines, lines, runInProcess } from './support.js';

beforeAll(assertBuilt);

describe.each(testDatabaseUrls())('idgate sessions and idgate grants on $name', (kind) => {
  let t: TestApp;
  let env: Record<string, string>;
  let idgate: IdgateClient;
  let web: Awaited<ReturnType<typeof webApplication>>;
  const cli = (...args: string[]) => runInProcess(args, { env });
  const json = async <T>(schema: z.ZodType<T>, ...args: string[]): Promise<T> => {
    const result = await cli(...args, '--json');
    expect(result.code, result.stderr).toBe(0);
    return schema.parse(JSON.parse(result.stdout));
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    // The CLI works on the server's database, with its secret.
    env = envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET });
    await t.addUser('kim', 'a sturdy pass phrase!');
    await t.addUser('noa', 'a sturdy pass phrase!');
    idgate = createIdgateClient({ baseUrl: t.baseUrl, fetch: t.fetch });
    web = await webApplication(t, 'Web');
  });
  afterAll(async () => t?.close());

  it('lists sessions and grants of a real sign-in, and revokes one grant: its refresh token gets invalid_grant', async () => {
    const one = await signInTo(web, browser(t), { username: 'kim', password: 'a sturdy pass phrase!' });
    const two = await signInTo(web, browser(t), { username: 'kim', password: 'a sturdy pass phrase!' });

    const sessions = await json(z.array(SessionInfo), 'sessions', 'list', 'kim');
    expect(sessions).toHaveLength(2);
    for (const session of sessions) {
      expect(session).toMatchObject({
        sourceAddress: '127.0.0.1',
        userAgent: BROWSER,
        clients: [{ clientId: web.clientId, name: 'Web' }],
      });
    }
    const table = await cli('sessions', 'list', 'kim');
    expect(table.code).toBe(0);
    const rows = lines(table.stdout);
    expect(rows[0]).toMatch(/^ID +CREATED +LAST_SEEN +EXPIRES +ADDRESS +CLIENTS +USER_AGENT$/);
    expect(rows.slice(1).map((row) => row.split(/ +/)[0])).toEqual(sessions.map((s) => s.id));
    expect(rows[1]).toMatch(/ 127\.0\.0\.1 +Web +Mozilla\/5\.0 \(X11; Linux x86_64\) TestBrowser\/1\.0$/);

    const grants = await json(z.array(GrantInfo), 'grants', 'list', 'kim');
    // A client without audiences: its grants cover the client itself.
    expect(grants.map((g) => [g.clientId, g.clientName, g.lastUsedAddress, g.resources])).toEqual([
      [web.clientId, 'Web', '127.0.0.1', [web.clientId]],
      [web.clientId, 'Web', '127.0.0.1', [web.clientId]],
    ]);
    const listed = lines((await cli('grants', 'list', 'kim')).stdout);
    expect(listed[0]).toMatch(/^ID +CLIENT +NAME +SCOPES +RESOURCES +CREATED +LAST_USED +ADDRESS +EXPIRES$/);
    expect(listed[1]).toMatch(
      new RegExp(
        `^\\S+ +${web.clientId} +Web +openid offline_access +${web.clientId} +\\S+ +\\S+ +127\\.0\\.0\\.1 +\\S+$`,
      ),
    );

    const sid = (token: string) => (JSON.parse(atob(token.split('.')[1] as string)) as { sid: string }).sid;
    const revoked = await cli('grants', 'revoke', 'kim', sid(one.tokens.access_token));
    expect(revoked).toMatchObject({ code: 0, stderr: '' });
    expect(revoked.stdout).toBe(`revoked grant ${sid(one.tokens.access_token)} of kim\n`);
    const refused = await idgate
      .refreshToken({ ...web, refreshToken: one.tokens.refresh_token as string })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(IdgateHttpError);
    expect((refused as IdgateHttpError).oauthError?.error).toBe('invalid_grant');
    const fresh = await idgate.refreshToken({ ...web, refreshToken: two.tokens.refresh_token as string });
    expect(fresh.access_token).toBeTruthy();

    // Ending one session revokes the grant made in it; then --all ends the rest.
    const ended = await cli('sessions', 'revoke', 'kim', sessions[0]?.id as string);
    expect(ended.stdout).toBe(`ended session ${sessions[0]?.id} of kim; 0 grants revoked\n`);
    expect(
      await json(
        z.object({ ended: z.number(), revokedGrants: z.number() }),
        'sessions',
        'revoke',
        'kim',
        '--all',
      ),
    ).toEqual({
      ended: 1,
      revokedGrants: 1,
    });
    expect((await cli('sessions', 'list', 'kim')).stdout).toBe('no sessions of kim\n');
    expect((await cli('grants', 'list', 'kim')).stdout).toBe('no grants of kim\n');
    const after = await idgate
      .refreshToken({ ...web, refreshToken: fresh.refresh_token as string })
      .catch((error: unknown) => error);
    expect((after as IdgateHttpError).oauthError?.error).toBe('invalid_grant');
  });

  it('revokes every grant with --all and says how many', async () => {
    await signInTo(web, browser(t), { username: 'noa', password: 'a sturdy pass phrase!' });
    await signInTo(web, browser(t), { username: 'noa', password: 'a sturdy pass phrase!' });
    expect((await cli('grants', 'revoke', 'noa', '--all')).stdout).toBe('revoked 2 grants of noa\n');
    expect(await json(z.object({ revoked: z.number() }), 'grants', 'revoke', 'noa', '--all')).toEqual({
      revoked: 0,
    });
    expect(await json(z.array(GrantInfo), 'grants', 'list', 'noa')).toEqual([]);
    // The sessions stay signed in: revoking grants does not sign the browsers out.
    expect(await json(z.array(SessionInfo), 'sessions', 'list', 'noa')).toHaveLength(2);
  });

  it('refuses unknown users and ids, malformed ids, and an id together with --all', async () => {
    for (const [args, message] of [
      [['sessions', 'list', 'nobody'], 'no user nobody'],
      [['grants', 'revoke', 'nobody', '--all'], 'no user nobody'],
      [
        ['sessions', 'revoke', 'kim', '0b6f7c2e-7d1a-4c53-9d7e-2f1c4b8a9e10'],
        'no session 0b6f7c2e-7d1a-4c53-9d7e-2f1c4b8a9e10 of user kim',
      ],
      [
        ['grants', 'revoke', 'kim', 'no such grant'],
        'id "no such grant": must be an id of 1–64 letters, digits and -',
      ],
      [['grants', 'revoke', 'kim', 'a\u0000b'], 'must be an id of 1–64 letters, digits and -'],
      [['sessions', 'revoke', 'kim'], 'give a session id, or --all for every session'],
      [['grants', 'revoke', 'kim', 'g-1', '--all'], 'give a grant id or --all, not both'],
    ] as const) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(errorLines(result.stderr).join('\n'), args.join(' ')).toContain(message);
      expect(result.stdout).toBe('');
    }
  });

  it('runs as the installed binary: exit status and message on stderr', async () => {
    const result = await runInProcess(['grants', 'list', 'nobody'], { env });
    expect(result.code).toBe(1);
    expect(errorLines(result.stderr)).toEqual(['idgate: no user nobody']);
  });
});
