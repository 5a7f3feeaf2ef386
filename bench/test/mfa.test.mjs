import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base32Bytes, cbor, driveSignIns, passkeyForm, percentile, stepOf, totpCode } from '../src/mfa.mjs';
import { renderDetails } from '../src/report-tables.mjs';

describe('the bench’s own TOTP', () => {
  it('computes RFC 6238’s SHA-1 test vectors (their last six digits)', () => {
    const secret = Buffer.from('12345678901234567890');
    // RFC 6238 Appendix B: T = 59 s → 94287082, T = 1111111109 → 07081804, T = 2000000000 → 69279037.
    assert.equal(totpCode(secret, stepOf(59_000)), '287082');
    assert.equal(totpCode(secret, stepOf(1_111_111_109_000)), '081804');
    assert.equal(totpCode(secret, stepOf(2_000_000_000_000)), '279037');
  });
  it('reads base32 keys as the enrolment page groups them', () => {
    assert.deepEqual(base32Bytes('GEZD GNBV GY3T QOJQ'), Buffer.from('1234567890'));
  });
});

describe('the bench’s software passkey', () => {
  it('writes CBOR as RFC 8949 does (maps, negative ints, text, bytes)', () => {
    assert.equal(cbor({ a: 1 }).toString('hex'), 'a1616101');
    assert.equal(cbor(new Map([[-1, 1]])).toString('hex'), 'a12001');
    assert.equal(cbor(Buffer.from([1, 2])).toString('hex'), '420102');
    assert.equal(cbor(300).toString('hex'), '19012c');
  });
  it('reads the options and the binding of a page’s passkey form', () => {
    const html =
      '<form method="post" action="/x"><input type="hidden" name="interaction" value="i-1"></form>' +
      '<form method="post" action="/oauth/login/passkey" data-webauthn="conditional" ' +
      'data-webauthn-options="{&quot;challenge&quot;:&quot;abc&quot;,&quot;rpId&quot;:&quot;localhost&quot;}" class="passkey" hidden>' +
      '<input type="hidden" name="interaction" value="i-2">\n<input type="hidden" name="csrf" value="c&amp;2"></form>';
    assert.deepEqual(passkeyForm(html), {
      options: { challenge: 'abc', rpId: 'localhost' },
      interaction: 'i-2',
      csrf: 'c&2',
    });
    assert.equal(passkeyForm('<p>no passkeys</p>'), undefined);
  });
});

describe('the sign-in driver', () => {
  it('signs each person in at most once per time step, and stops when none is left', async () => {
    const users = Array.from({ length: 5 }, (_, i) => ({
      username: `u${i}`,
      password: 'p',
      secret: Buffer.alloc(20),
      lastStep: -1,
    }));
    /** @type {string[]} */
    const seen = [];
    const result = await driveSignIns({
      users,
      concurrency: 3,
      seconds: 2,
      pid: undefined,
      signIn: async (user, step) => {
        seen.push(`${user.username}@${step}`);
      },
    });
    // Unless the run crossed a step boundary, five sign-ins, each person once.
    assert.equal(new Set(seen).size, seen.length);
    assert.ok(result.requests >= 5 && result.requests <= 10, String(result.requests));
    assert.equal(result.detail.ranOut, true);
    assert.equal(result.errors, 0);
  });
  it('counts a failed sign-in as an error, not a latency', async () => {
    const users = [{ username: 'u', password: 'p', secret: Buffer.alloc(20), lastStep: -1 }];
    const result = await driveSignIns({
      users,
      concurrency: 1,
      seconds: 30,
      pid: undefined,
      signIn: async () => {
        throw new Error('second factor: 401');
      },
    });
    assert.equal(result.requests, 0);
    assert.equal(result.errors, 1);
    assert.deepEqual(result.detail.failures, { 'second factor: 401': 1 });
  });
  it('takes nearest-rank percentiles', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(sorted, 50), 50);
    assert.equal(percentile(sorted, 99), 99);
    assert.equal(percentile([7], 99), 7);
  });
});

describe('the report', () => {
  it('gives sign-ins a table of their own, not a row among the wrk loads', () => {
    const signIn = {
      id: 'idgate.sign-in-totp',
      system: 'idgate',
      label: 'password (argon2id) + TOTP code',
      rps: 12.34,
      requests: 62,
      duration: 5,
      errors: 0,
      latency: { p50: 600.5, p90: 800, p99: 950.25, max: 990 },
      cpu: { serverMicrosPerRequest: 140_000 },
      detail: { concurrency: 8 },
    };
    const lines = renderDetails({
      measurements: [signIn],
      settings: { database: 'sqlite' },
      machine: { cpus: 2 },
      idgateRss: { underLoad: 0, lifetime: 0 },
      notes: [],
      checks: [],
    });
    assert.ok(lines.includes('## Second-factor sign-ins'));
    assert.ok(
      lines.includes('| password (argon2id) + TOTP code | 12.3 | 600.5 | 950.25 | 62 | 0 | 140.0 | — |'),
    );
    assert.ok(!lines.some((line) => line.startsWith('| sign-in-totp |')));
  });
});
