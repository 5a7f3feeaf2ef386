import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { AuditEvent } from '@idgate/schema';
import { createIdgateAdminClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endsWithTest } from '../helpers/child-processes.js';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { registerResponseSecrets, registerSecret } from '../helpers/run-record.js';
import {
  BIN,
  type InitCredentials,
  initDatabase,
  type ServeProcess,
  startServeProcesses,
} from '../helpers/serve-process.js';
import { freePort } from '../helpers/server.js';

const SECRET = 'replica-test-secret-0123456789abcdefghij';
const postgres = testDatabaseUrls().find((kind) => kind.name === 'postgres');

/** Events as they arrive from one follower, and a way to wait (bounded) for one of them. */
class Arrivals {
  readonly events: AuditEvent[] = [];
  #waiters: Array<() => void> = [];

  push(event: AuditEvent): void {
    this.events.push(event);
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Resolves once an event with `id` has arrived; fails after `limitMs` naming what did arrive. */
  async until(id: string, limitMs = 10_000): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (!this.events.some((event) => event.id === id)) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`event ${id} did not arrive; got ${this.events.map((e) => e.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

// The live tail seen from one server process while another one, and the CLI, write: the stream
// reads the shared database, not the serving process's memory.
describe.runIf(postgres !== undefined)(
  'the audit live tail across server processes on one PostgreSQL',
  () => {
    let database: TestDatabase;
    let env: Record<string, string | undefined>;
    let A: ServeProcess;
    let B: ServeProcess;
    let creds: InitCredentials;

    beforeAll(async () => {
      database = await (postgres as NonNullable<typeof postgres>).create();
      const [portA, portB] = [await freePort(), await freePort()];
      env = {
        PATH: process.env.PATH,
        IDGATE_DATABASE_URL: database.url,
        IDGATE_SECRET: SECRET,
        IDGATE_ISSUER: `http://127.0.0.1:${portA}/oauth`,
        IDGATE_HOST: '127.0.0.1',
        IDGATE_LOG_LEVEL: 'info',
      };
      registerSecret('server secret', SECRET);
      creds = await initDatabase(env);
      [A, B] = (await startServeProcesses(env, [portA, portB])) as [ServeProcess, ServeProcess];
    }, 60_000);

    afterAll(async () => {
      await Promise.all([A?.stop(), B?.stop()]);
      await database?.drop();
    });

    const onA = () => createIdgateAdminClient({ baseUrl: A.url, apiKey: creds.apiKey });
    const onB = () => createIdgateAdminClient({ baseUrl: B.url, apiKey: creds.apiKey });

    /** An admin change through B's REST API: the admin user's groups. */
    const changeGroups = async (groups: string[]) => {
      const response = await fetch(`${B.url}/admin/v1/users/${creds.admin.username}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${creds.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ groups: ['idgate:admins', ...groups] }),
      });
      expect(response.status).toBe(200);
    };
    /** The token endpoint of B with the init client. */
    const token = async (form: Record<string, string>) => {
      const { clientId, clientSecret } = creds.client;
      const response = await fetch(`${B.url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams(form),
      });
      const body = (await response.json()) as Record<string, string>;
      registerResponseSecrets(body);
      expect(response.status, JSON.stringify(body)).toBe(200);
      return body;
    };
    const signIn = () =>
      token({
        grant_type: 'password',
        username: creds.admin.username,
        password: creds.admin.password,
        scope: 'openid offline_access',
      });
    /** B's own listing of everything since `since`: what each follower must have received. */
    const listedOnB = async (since: string) => {
      const all: AuditEvent[] = [];
      for await (const event of onB().eachEvent({ since })) all.push(event);
      return all;
    };
    /** The newest event B lists: the one just made. */
    const newest = async (since: string) => (await listedOnB(since)).at(-1) as AuditEvent;

    /** Follows A's stream with the SDK into `arrivals` until `abort`. */
    const followOnA = (
      arrivals: Arrivals,
      signal: AbortSignal,
      options: { since?: string; lastEventId?: string },
    ) =>
      (async () => {
        const query = options.since === undefined ? {} : { since: options.since };
        const resume = options.lastEventId === undefined ? {} : { lastEventId: options.lastEventId };
        for await (const event of onA().followEvents(query, { signal, ...resume })) arrivals.push(event);
      })();

    /** `idgate audit --follow --json` as a child process on the same database, its stdout read line by line. */
    const followWithCli = (arrivals: Arrivals, since: string) => {
      const child: ChildProcessWithoutNullStreams = endsWithTest(
        spawn(process.execPath, [BIN, 'audit', '--follow', '--json', '--since', since], {
          env,
          stdio: 'pipe',
        }),
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      createInterface({ input: child.stdout }).on('line', (line) =>
        arrivals.push(AuditEvent.parse(JSON.parse(line))),
      );
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      return {
        async stop() {
          child.kill('SIGTERM');
          return { code: await exited, stderr };
        },
      };
    };

    it('delivers what B records to the SDK on A and to `idgate audit --follow`, in order, once each', async () => {
      const since = new Date().toISOString();
      const sdk = new Arrivals();
      const cli = new Arrivals();
      const abort = new AbortController();
      const following = followOnA(sdk, abort.signal, { since });
      const tail = followWithCli(cli, since);
      try {
        // The first change, once both have it, shows both followers are live: the rest is made after.
        await changeGroups(['sre']);
        const first = await newest(since);
        await Promise.all([sdk.until(first.id), cli.until(first.id)]);
        const signedIn = await signIn();
        await token({ grant_type: 'refresh_token', refresh_token: signedIn.refresh_token ?? '' });
        await changeGroups([]);
        const last = await newest(since);
        await Promise.all([sdk.until(last.id), cli.until(last.id)]);
      } finally {
        abort.abort();
        await following;
        const stopped = await tail.stop();
        expect(stopped.stderr).toBe('');
      }
      const recorded = await listedOnB(since);
      expect(recorded.map((event) => [event.type, event.outcome])).toEqual([
        ['admin.changed', 'success'],
        ['sign-in.succeeded', 'success'],
        ['token.issued', 'success'],
        ['refresh.rotated', 'success'],
        ['token.issued', 'success'],
        ['admin.changed', 'success'],
      ]);
      expect(recorded[1]).toMatchObject({ details: { channel: 'password-grant' } });
      // Exactly B's events, each once, in B's order, with every field as stored.
      expect(sdk.events).toEqual(recorded);
      expect(cli.events).toEqual(recorded);
    });

    it('resumes with Last-Event-ID after a disconnect and misses nothing made meanwhile', async () => {
      const since = new Date().toISOString();
      const before = new Arrivals();
      const abort = new AbortController();
      const following = followOnA(before, abort.signal, { since });
      await changeGroups(['ops']);
      const seen = await newest(since);
      await before.until(seen.id);
      abort.abort();
      await following;
      // Disconnected: B records a change and a sign-in.
      await changeGroups([]);
      await signIn();
      const meanwhile = (await listedOnB(since)).filter((event) => event.id !== seen.id);
      expect(meanwhile.map((event) => event.type)).toEqual([
        'admin.changed',
        'sign-in.succeeded',
        'token.issued',
      ]);

      const after = new Arrivals();
      const resumed = new AbortController();
      const resuming = followOnA(after, resumed.signal, { lastEventId: seen.id });
      try {
        await after.until((meanwhile.at(-1) as AuditEvent).id);
        // And still live: one more made after the resume arrives too.
        await changeGroups(['sre']);
        const live = await newest(since);
        await after.until(live.id);
        expect(after.events).toEqual([...meanwhile, live]);
      } finally {
        resumed.abort();
        await resuming;
      }
    });
  },
);
