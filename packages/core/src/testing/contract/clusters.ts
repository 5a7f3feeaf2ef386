import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newApiKey, newClient, newCode } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function clustersContract(subject: StorageUnderTest): void {
  describe('clusters and what they bind', () => {
    const cluster = (name: string, audience = `kubernetes:${name.toLowerCase()}`) => ({
      name,
      audience,
      requireMfa: false,
      createdAt: at('2026-01-01T00:00:00.001Z'),
    });

    it('creates clusters lower-cased, finds them in any case and lists them by name in byte order', async () => {
      const storage = subject();
      expect(await storage.clusters.create(cluster('Prod'))).toStrictEqual(cluster('prod'));
      await storage.clusters.create(cluster('a-b'));
      await storage.clusters.create(cluster('ab'));
      expect(await storage.clusters.findByName('PROD')).toStrictEqual(cluster('prod'));
      expect(await storage.clusters.findByName('nope')).toBeUndefined();
      expect((await storage.clusters.list()).map((c) => c.name)).toEqual(['a-b', 'ab', 'prod']);
    });

    it('refuses a taken name (any case) or audience with the field that collided', async () => {
      const storage = subject();
      await storage.clusters.create(cluster('prod'));
      await expect(storage.clusters.create(cluster('PROD', 'kubernetes:other'))).rejects.toMatchObject({
        field: 'name',
      });
      const audience = storage.clusters.create(cluster('other', 'kubernetes:prod'));
      await expect(audience).rejects.toBeInstanceOf(StorageConflictError);
      await expect(audience).rejects.toMatchObject({ field: 'audience' });
      expect(await storage.clusters.list()).toHaveLength(1);
    });

    it('renames a cluster and changes its audience, refusing a name or audience another has', async () => {
      const storage = subject();
      await storage.clusters.create(cluster('prod'));
      await storage.clusters.create(cluster('dev'));
      expect(
        await storage.clusters.update('PROD', { name: 'Live', audience: 'https://live.example' }),
      ).toStrictEqual(cluster('live', 'https://live.example'));
      expect(await storage.clusters.findByName('prod')).toBeUndefined();
      expect(await storage.clusters.update('live', { audience: 'https://live.example' })).toStrictEqual(
        cluster('live', 'https://live.example'),
      );
      await expect(storage.clusters.update('live', { name: 'dev' })).rejects.toMatchObject({ field: 'name' });
      await expect(storage.clusters.update('live', { audience: 'kubernetes:dev' })).rejects.toMatchObject({
        field: 'audience',
      });
      expect(await storage.clusters.update('nope', { name: 'x' })).toBeUndefined();
    });

    it('keeps whether a cluster requires a second factor, false unless set', async () => {
      const storage = subject();
      await storage.clusters.create(cluster('dev'));
      await storage.clusters.create({ ...cluster('prod'), requireMfa: true });
      expect((await storage.clusters.list()).map((c) => [c.name, c.requireMfa])).toEqual([
        ['dev', false],
        ['prod', true],
      ]);
      expect(await storage.clusters.update('prod', { requireMfa: false })).toStrictEqual(cluster('prod'));
      expect(await storage.clusters.update('dev', { requireMfa: true })).toStrictEqual({
        ...cluster('dev'),
        requireMfa: true,
      });
      expect((await storage.clusters.findByName('dev'))?.requireMfa).toBe(true);
    });

    it('rebinds every key of a cluster, revoked ones too, to its new name and audience', async () => {
      const storage = subject();
      await storage.apiKeys.create(newApiKey({ cluster: { name: 'prod', audience: 'kubernetes:prod' } }));
      await storage.apiKeys.create(
        newApiKey({
          id: 'k-2',
          prefix: 'idg_00000002',
          cluster: { name: 'prod', audience: 'kubernetes:prod' },
        }),
      );
      await storage.apiKeys.revoke('k-2', at('2026-02-01T00:00:00.000Z'));
      await storage.apiKeys.create(
        newApiKey({
          id: 'k-3',
          prefix: 'idg_00000003',
          cluster: { name: 'dev', audience: 'kubernetes:dev' },
        }),
      );
      expect(await storage.apiKeys.rebindCluster('prod', { name: 'live', audience: 'https://live' })).toBe(2);
      expect((await storage.apiKeys.list()).map((k) => [k.id, k.cluster?.name, k.cluster?.audience])).toEqual(
        [
          ['k-1', 'live', 'https://live'],
          ['k-2', 'live', 'https://live'],
          ['k-3', 'dev', 'kubernetes:dev'],
        ],
      );
      expect(await storage.apiKeys.rebindCluster('prod', { name: 'x', audience: 'y:z' })).toBe(0);
    });

    it('removes a cluster once', async () => {
      const storage = subject();
      await storage.clusters.create(cluster('prod'));
      expect(await storage.clusters.remove('Prod')).toBe(true);
      expect(await storage.clusters.remove('prod')).toBe(false);
      expect(await storage.clusters.findByName('prod')).toBeUndefined();
    });

    it('keeps an API key’s cluster binding and revokes the live keys of a cluster', async () => {
      const storage = subject();
      const bound = newApiKey({ cluster: { name: 'prod', audience: 'kubernetes:prod' } });
      await storage.apiKeys.create(bound);
      await storage.apiKeys.create(newApiKey({ id: 'k-2', prefix: 'idg_00000002' }));
      await storage.apiKeys.create(
        newApiKey({
          id: 'k-3',
          prefix: 'idg_00000003',
          cluster: { name: 'dev', audience: 'kubernetes:dev' },
        }),
      );
      expect(await storage.apiKeys.findByPrefix(bound.prefix)).toStrictEqual(bound);
      const when = at('2026-02-01T00:00:00.000Z');
      expect(await storage.apiKeys.revokeByCluster('prod', when)).toBe(1);
      expect(await storage.apiKeys.revokeByCluster('prod', when)).toBe(0);
      const keys = await storage.apiKeys.list();
      expect(keys.map((k) => [k.id, k.revokedAt])).toEqual([
        ['k-1', when],
        ['k-2', null],
        ['k-3', null],
      ]);
    });

    it('replaces a client’s audiences', async () => {
      const storage = subject();
      const client = newClient();
      await storage.clients.create(client);
      expect(await storage.clients.setAudiences(client.clientId, ['kubernetes:a', 'kubernetes:b'])).toBe(
        true,
      );
      expect((await storage.clients.findById(client.clientId))?.audiences).toEqual([
        'kubernetes:a',
        'kubernetes:b',
      ]);
      expect(await storage.clients.setAudiences('missing', [])).toBe(false);
    });

    it('keeps the resources of an authorization code, and null for none', async () => {
      const storage = subject();
      await storage.authorizationCodes.create(newCode({ resource: ['kubernetes:a', 'https://api.example'] }));
      await storage.authorizationCodes.create(newCode({ hash: 'b3RoZXI' }));
      const first = await storage.authorizationCodes.redeem('Y29kZS1oYXNo', at('2026-01-01T10:00:10.000Z'));
      const second = await storage.authorizationCodes.redeem('b3RoZXI', at('2026-01-01T10:00:10.000Z'));
      expect(first.status === 'redeemed' && first.code.resource).toEqual([
        'kubernetes:a',
        'https://api.example',
      ]);
      expect(second.status === 'redeemed' && second.code.resource).toBeNull();
    });

    it('does all of a cluster removal in one transaction, or none of it', async () => {
      const storage = subject();
      await storage.clusters.create(cluster('prod'));
      await storage.apiKeys.create(newApiKey({ cluster: { name: 'prod', audience: 'kubernetes:prod' } }));
      await expect(
        storage.transaction(async (tx) => {
          await tx.clusters.remove('prod');
          await tx.apiKeys.revokeByCluster('prod', at('2026-02-01T00:00:00.000Z'));
          throw new Error('interrupted');
        }),
      ).rejects.toThrow('interrupted');
      expect(await storage.clusters.findByName('prod')).toBeDefined();
      expect((await storage.apiKeys.list())[0]?.revokedAt).toBeNull();
    });
  });
}
