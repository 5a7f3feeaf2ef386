import { DEFAULT_LOGIN_THROTTLE, type Idgate, type UserRecord } from '@idgate/core';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

// Codes come from otplib, an implementation of RFC 6238 independent of idgate's.
const codeAt = (secret: string, ms: number) => generateSync({ secret, epoch: Math.floor(ms / 1000) });

const origin = { address: '203.0.113.9', userAgent: 'test' };

describe.each(testDatabaseUrls())('second factors on $name', (kind) => {
  let t: TestApp;
  const clock = testClock();
  let core: Idgate;
  let users = 0;
  beforeAll(async () => {
    t = await startTestApp(kind, {}, { clock });
    core = t.server.context.core;
  });
  afterAll(async () => t?.close());

  async function setup() {
    const username = `user${++users}`;
    const id = await t.addUser(username, 'battery-staple-11f033');
    const user = (await t.server.context.storage.users.findById(id)) as UserRecord;
    const { storage } = t.server.context;
    const events = async () => storage.auditEvents.list({ userId: user.id, limit: 50 });
    return {
      user,
      storage,
      events,
      factors: core.factors,
      now: () => clock.now(),
      advance: (ms: number) => clock.advance(ms),
    };
  }

  async function enrolled() {
    const s = await setup();
    const enrolment = await s.factors.startTotp(s.user, 'phone');
    const done = await s.factors.confirmTotp(
      s.user,
      enrolment.factorId,
      codeAt(enrolment.secret, s.now()),
      origin,
    );
    if (!done.ok || done.recoveryCodes === null) throw new Error('enrolment failed');
    return { ...s, secret: enrolment.secret, uri: enrolment.uri, recoveryCodes: done.recoveryCodes };
  }

  describe('RFC 6238 TOTP against otplib', () => {
    it('puts the secret and parameters in the otpauth URI and keeps it sealed at rest', async () => {
      const { uri, secret, storage, user } = await enrolled();
      const url = new URL(uri);
      expect(url.protocol).toBe('otpauth:');
      expect(url.searchParams.get('secret')).toBe(secret);
      expect(url.searchParams.get('digits')).toBe('6');
      expect(url.searchParams.get('period')).toBe('30');
      expect(url.searchParams.get('algorithm')).toBe('SHA1');
      const [stored] = await storage.factors.list(user.id);
      expect(stored?.sealedSecret).not.toContain(secret);
      expect(stored?.confirmedAt).not.toBeNull();
    });

    it('refuses to confirm an enrolment with a wrong code, and leaves it unconfirmed', async () => {
      const { user, factors, storage, now } = await setup();
      const enrolment = await factors.startTotp(user, 'phone');
      const wrong = String((Number(codeAt(enrolment.secret, now())) + 1) % 1_000_000).padStart(6, '0');
      expect(await factors.confirmTotp(user, enrolment.factorId, wrong, origin)).toEqual({ ok: false });
      expect((await storage.factors.list(user.id))[0]?.confirmedAt).toBeNull();
    });

    it('accepts the codes of the previous, current and next step, and refuses older and newer ones', async () => {
      const { user, factors, secret, advance, now: clockNow } = await enrolled();
      advance(5 * 60_000);
      const now = clockNow();
      for (const offset of [-60_000, 60_000]) {
        expect(await factors.verify(user, codeAt(secret, now + offset), ['pwd'], origin)).toEqual({
          ok: false,
          failure: 'invalid_code',
        });
      }
      expect(await factors.verify(user, codeAt(secret, now - 30_000), ['pwd'], origin)).toMatchObject({
        ok: true,
      });
      expect(await factors.verify(user, codeAt(secret, now), ['pwd'], origin)).toMatchObject({ ok: true });
      const check = await factors.verify(user, codeAt(secret, now + 30_000), ['pwd'], origin);
      expect(check).toEqual({ ok: true, method: 'totp', amr: ['pwd', 'otp', 'mfa'] });
    });

    it('refuses a replayed code, and an older step once a newer one was used', async () => {
      const { user, factors, secret, advance, events, now: clockNow } = await enrolled();
      advance(60_000);
      const now = clockNow();
      expect(await factors.verify(user, codeAt(secret, now), ['pwd'], origin)).toMatchObject({ ok: true });
      expect(await factors.verify(user, codeAt(secret, now), ['pwd'], origin)).toMatchObject({ ok: false });
      expect(await factors.verify(user, codeAt(secret, now - 30_000), ['pwd'], origin)).toMatchObject({
        ok: false,
      });
      const types = (await events()).map((e) => e.type);
      expect(types.filter((t) => t === 'factor.failed')).toHaveLength(2);
      expect(types).toContain('factor.used');
    });

    it('refuses the code that confirmed the enrolment (same step)', async () => {
      const { user, factors, secret, now } = await enrolled();
      expect(await factors.verify(user, codeAt(secret, now()), ['pwd'], origin)).toMatchObject({ ok: false });
    });

    it('locks the second factor after five wrong codes, even for the right one, until the window passes', async () => {
      const { user, factors, secret, advance, now } = await enrolled();
      advance(60_000);
      for (let i = 0; i < 5; i++)
        expect(await factors.verify(user, '000000', ['pwd'], origin)).toMatchObject({
          failure: 'invalid_code',
        });
      const locked = await factors.verify(user, codeAt(secret, now()), ['pwd'], origin);
      expect(locked).toMatchObject({ ok: false, failure: 'locked' });
      expect(locked.ok === false && locked.failure === 'locked' && locked.retryAfterSeconds).toBeGreaterThan(
        0,
      );
      advance(DEFAULT_LOGIN_THROTTLE.windowSeconds * 1000 + 1000);
      expect(await factors.verify(user, codeAt(secret, now()), ['pwd'], origin)).toMatchObject({ ok: true });
    });
  });

  describe('recovery codes', () => {
    it('gives ten distinct codes at the first enrolment, each good once, stored only hashed', async () => {
      const { user, factors, recoveryCodes, storage, events } = await enrolled();
      expect(new Set(recoveryCodes).size).toBe(10);
      const code = recoveryCodes[3] as string;
      expect(await factors.verify(user, code.toLowerCase(), ['pwd'], origin)).toEqual({
        ok: true,
        method: 'recovery',
        amr: ['pwd', 'otp', 'mfa'],
      });
      expect(await factors.verify(user, code, ['pwd'], origin)).toMatchObject({
        ok: false,
        failure: 'invalid_code',
      });
      expect(await storage.factors.recoveryCodesLeft(user.id)).toBe(9);
      const rows = await t.services.storage.db
        .selectFrom('recovery_codes')
        .selectAll()
        .where('user_id', '=', user.id)
        .execute();
      expect(rows).toHaveLength(10);
      for (const typed of recoveryCodes)
        expect(JSON.stringify(rows)).not.toContain(typed.replaceAll('-', ''));
      const used = (await events()).find((e) => e.type === 'recovery-code.used');
      expect(used?.details).toEqual({ left: 9 });
      expect(JSON.stringify(await events())).not.toContain(code);
    });

    it('regenerating invalidates the old set', async () => {
      const { user, factors, recoveryCodes } = await enrolled();
      const fresh = await factors.regenerateRecoveryCodes(user, origin);
      expect(fresh).toHaveLength(10);
      expect(await factors.verify(user, recoveryCodes[0] as string, ['pwd'], origin)).toMatchObject({
        ok: false,
      });
      expect(await factors.verify(user, fresh[0] as string, ['pwd'], origin)).toMatchObject({ ok: true });
    });

    it('gives no new set when a second factor is enrolled', async () => {
      const { user, factors, advance, now } = await enrolled();
      advance(60_000);
      const second = await factors.startTotp(user, 'tablet');
      const done = await factors.confirmTotp(user, second.factorId, codeAt(second.secret, now()), origin);
      expect(done).toEqual({ ok: true, recoveryCodes: null });
      await expect(factors.startTotp(user, 'tablet')).rejects.toMatchObject({ field: 'name' });
    });
  });
});
