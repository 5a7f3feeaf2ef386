import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newIdentityProvider, newLinkedIdentity } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function identityProvidersContract(subject: StorageUnderTest): void {
  describe('identity providers', () => {
    it('round-trips a provider, its config JSON included, and finds it regardless of case', async () => {
      const storage = subject();
      expect(await storage.identityProviders.create(newIdentityProvider())).toStrictEqual(
        newIdentityProvider(),
      );
      expect(await storage.identityProviders.findByName('github')).toStrictEqual(newIdentityProvider());
      expect(await storage.identityProviders.findByName('GitHub')).toStrictEqual(newIdentityProvider());
      expect(await storage.identityProviders.findByName('gitlab')).toBeUndefined();
    });

    it('stores the name lower-cased', async () => {
      const storage = subject();
      const created = await storage.identityProviders.create(
        newIdentityProvider({ name: 'Corp-SSO', type: 'oidc' }),
      );
      expect(created.name).toBe('corp-sso');
      expect((await storage.identityProviders.list()).map((p) => p.name)).toEqual(['corp-sso']);
      expect((await storage.identityProviders.findByName('CORP-sso'))?.name).toBe('corp-sso');
    });

    it('refuses a name that exists in any case with a name conflict', async () => {
      const storage = subject();
      await storage.identityProviders.create(newIdentityProvider());
      for (const name of ['github', 'GITHUB', 'GitHub']) {
        const attempt = storage.identityProviders.create(newIdentityProvider({ name }));
        await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
        await expect(attempt).rejects.toMatchObject({ field: 'name' });
      }
      expect(await storage.identityProviders.list()).toHaveLength(1);
    });

    it('keeps a conflict inside a transaction from spoiling it', async () => {
      const storage = subject();
      await storage.identityProviders.create(newIdentityProvider());
      await storage.transaction(async (tx) => {
        await expect(
          tx.identityProviders.create(newIdentityProvider({ name: 'GitHub' })),
        ).rejects.toMatchObject({
          field: 'name',
        });
        await tx.identityProviders.create(newIdentityProvider({ name: 'gitlab', type: 'gitlab' }));
      });
      expect((await storage.identityProviders.list()).map((p) => p.name)).toEqual(['github', 'gitlab']);
    });

    it('lists by name in byte order', async () => {
      const storage = subject();
      for (const name of ['okta', 'corp-ldap', 'github', 'corp2', 'a']) {
        await storage.identityProviders.create(newIdentityProvider({ name }));
      }
      expect((await storage.identityProviders.list()).map((p) => p.name)).toEqual([
        'a',
        'corp-ldap',
        'corp2',
        'github',
        'okta',
      ]);
    });

    it('disables and enables, stamping updatedAt; undefined for a provider it does not have', async () => {
      const storage = subject();
      await storage.identityProviders.create(newIdentityProvider());
      const t1 = at('2026-02-01T00:00:00.000Z');
      const disabled = await storage.identityProviders.setDisabled('GitHub', true, t1);
      expect(disabled).toStrictEqual(newIdentityProvider({ disabled: true, updatedAt: t1 }));
      expect(await storage.identityProviders.findByName('github')).toStrictEqual(disabled);
      const t2 = at('2026-02-02T00:00:00.000Z');
      expect(await storage.identityProviders.setDisabled('github', false, t2)).toStrictEqual(
        newIdentityProvider({ updatedAt: t2 }),
      );
      expect(await storage.identityProviders.setDisabled('gitlab', true, t2)).toBeUndefined();
    });

    it('updates the config and flag in place, keeping name, type, creation and linked identities', async () => {
      const storage = subject();
      await storage.identityProviders.create(newIdentityProvider());
      await storage.identities.link(newLinkedIdentity({ subject: '1' }));
      const t1 = at('2026-02-01T00:00:00.000Z');
      const config = { clientId: 'Iv1.new', clientSecret: 'v1.sealed.new', allowedOrganizations: ['acme'] };
      const updated = await storage.identityProviders.update('GitHub', {
        config,
        disabled: true,
        updatedAt: t1,
      });
      expect(updated).toStrictEqual(newIdentityProvider({ config, disabled: true, updatedAt: t1 }));
      expect(await storage.identityProviders.findByName('github')).toStrictEqual(updated);
      expect(await storage.identities.find('github', '1')).toBeDefined();
      expect(
        await storage.identityProviders.update('gitlab', { config, disabled: false, updatedAt: t1 }),
      ).toBeUndefined();
    });

    it('removes a provider with every identity linked through it, and nothing else', async () => {
      const storage = subject();
      await storage.identityProviders.create(newIdentityProvider());
      await storage.identityProviders.create(newIdentityProvider({ name: 'gitlab', type: 'gitlab' }));
      await storage.identities.link(newLinkedIdentity({ subject: '1' }));
      await storage.identities.link(newLinkedIdentity({ subject: '2', userId: 'u-bob' }));
      await storage.identities.link(newLinkedIdentity({ provider: 'gitlab', subject: '1' }));
      // An identity of a provider the configuration file declares (not stored) is left alone.
      await storage.identities.link(newLinkedIdentity({ provider: 'corp', subject: '1' }));

      expect(await storage.identityProviders.remove('GitHub')).toBe(true);
      expect(await storage.identityProviders.findByName('github')).toBeUndefined();
      expect(await storage.identities.find('github', '1')).toBeUndefined();
      expect(await storage.identities.find('github', '2')).toBeUndefined();
      expect((await storage.identities.listByUser('u-alice')).map((i) => i.provider)).toEqual([
        'corp',
        'gitlab',
      ]);

      expect(await storage.identityProviders.remove('github')).toBe(false);
      expect(await storage.identityProviders.remove('corp')).toBe(false);
      expect(await storage.identities.find('corp', '1')).toBeDefined();
    });

    it('undoes a removal, identities included, when the surrounding transaction fails', async () => {
      const storage = subject();
      await storage.identityProviders.create(newIdentityProvider());
      await storage.identities.link(newLinkedIdentity());
      await expect(
        storage.transaction(async (tx) => {
          expect(await tx.identityProviders.remove('github')).toBe(true);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(await storage.identityProviders.findByName('github')).toStrictEqual(newIdentityProvider());
      expect(await storage.identities.find('github', '583231')).toStrictEqual(newLinkedIdentity());
    });
  });

  describe('linked identities', () => {
    it('links, finds and unlinks an identity', async () => {
      const storage = subject();
      expect(await storage.identities.link(newLinkedIdentity())).toStrictEqual(newLinkedIdentity());
      expect(await storage.identities.find('github', '583231')).toStrictEqual(newLinkedIdentity());
      expect(await storage.identities.find('github', '583232')).toBeUndefined();
      expect(await storage.identities.find('gitlab', '583231')).toBeUndefined();
      expect(await storage.identities.unlink('github', '583231')).toBe(true);
      expect(await storage.identities.unlink('github', '583231')).toBe(false);
      expect(await storage.identities.find('github', '583231')).toBeUndefined();
    });

    it('round-trips an identity without email or groups', async () => {
      const storage = subject();
      const identity = newLinkedIdentity({
        email: null,
        groups: [],
        lastLoginAt: at('2026-01-02T00:00:00.000Z'),
      });
      await storage.identities.link(identity);
      expect(await storage.identities.find(identity.provider, identity.subject)).toStrictEqual(identity);
    });

    it('refuses a (provider, subject) linked already with a subject conflict, even to another user', async () => {
      const storage = subject();
      await storage.identities.link(newLinkedIdentity());
      const attempt = storage.identities.link(newLinkedIdentity({ userId: 'u-bob' }));
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ field: 'subject' });
      // The same subject at another provider is another identity.
      await storage.identities.link(newLinkedIdentity({ provider: 'gitlab' }));
    });

    it("lists a user's identities by provider then subject", async () => {
      const storage = subject();
      for (const [provider, subject] of [
        ['gitlab', '7'],
        ['github', 'b'],
        ['corp', 'z'],
        ['github', 'B'],
        ['github', 'a'],
      ] as const) {
        await storage.identities.link(newLinkedIdentity({ provider, subject }));
      }
      await storage.identities.link(newLinkedIdentity({ subject: 'bob', userId: 'u-bob' }));
      expect(
        (await storage.identities.listByUser('u-alice')).map((i) => `${i.provider}/${i.subject}`),
      ).toEqual(['corp/z', 'github/B', 'github/a', 'github/b', 'gitlab/7']);
      expect(await storage.identities.listByUser('u-bob')).toStrictEqual([
        newLinkedIdentity({ subject: 'bob', userId: 'u-bob' }),
      ]);
      expect(await storage.identities.listByUser('u-carol')).toEqual([]);
      expect(await storage.identities.countByProvider('github')).toBe(4);
      expect(await storage.identities.countByProvider('corp')).toBe(1);
      expect(await storage.identities.countByProvider('nope')).toBe(0);
    });

    it('records a sign-in: username, email and groups as given this time', async () => {
      const storage = subject();
      await storage.identities.link(newLinkedIdentity());
      const signedIn = at('2026-03-01T08:00:00.000Z');
      await storage.identities.recordSignIn('github', '583231', {
        username: 'octocat2',
        email: null,
        groups: ['github:acme'],
        at: signedIn,
      });
      expect(await storage.identities.find('github', '583231')).toStrictEqual(
        newLinkedIdentity({
          username: 'octocat2',
          email: null,
          groups: ['github:acme'],
          lastLoginAt: signedIn,
        }),
      );
      // Nothing happens for an identity that is not linked.
      await storage.identities.recordSignIn('github', 'nope', {
        username: 'x',
        email: null,
        groups: [],
        at: signedIn,
      });
      expect(await storage.identities.find('github', 'nope')).toBeUndefined();
    });

    it('keeps whether the provider vouched for the email, as of the latest sign-in', async () => {
      const storage = subject();
      await storage.identities.link(newLinkedIdentity({ emailVerified: true }));
      expect(await storage.identities.find('github', '583231')).toMatchObject({ emailVerified: true });
      const signedIn = at('2026-03-01T08:00:00.000Z');
      const fields = { username: 'octocat', email: 'o@example.com', groups: [], at: signedIn };
      await storage.identities.recordSignIn('github', '583231', fields);
      const found = await storage.identities.find('github', '583231');
      expect(found?.emailVerified).toBeUndefined();
      await storage.identities.recordSignIn('github', '583231', { ...fields, emailVerified: true });
      expect(await storage.identities.listByUser(found?.userId as string)).toMatchObject([
        { emailVerified: true },
      ]);
    });

    it('copies records in and out', async () => {
      const storage = subject();
      const record = newIdentityProvider();
      await storage.identityProviders.create(record);
      (record.config as { clientId: string }).clientId = 'changed';
      const found = await storage.identityProviders.findByName('github');
      expect(found?.config.clientId).toBe('Iv1.0123456789abcdef');
      if (found !== undefined) found.disabled = true;
      expect((await storage.identityProviders.findByName('github'))?.disabled).toBe(false);
    });
  });
}
