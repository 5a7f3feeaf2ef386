import { describe, expect, it } from 'vitest';
import {
  Cluster,
  ClusterAudience,
  ClusterName,
  CreateClusterInput,
  CreatedCluster,
  defaultClusterAudience,
  UpdateClusterInput,
} from '../src/index.js';

const cluster = {
  name: 'prod',
  audience: 'kubernetes:prod',
  requireMfa: false,
  kubectlClientId: 'cl_abc',
  createdAt: '2026-01-01T00:00:00.000Z',
};

describe('CreateClusterInput', () => {
  it('lower-cases the name and leaves the audience to its default', () => {
    expect(CreateClusterInput.parse({ name: ' Prod-EU ' })).toEqual({ name: 'prod-eu' });
    expect(defaultClusterAudience('prod-eu')).toBe('kubernetes:prod-eu');
    expect(CreateClusterInput.parse({ name: 'a', audience: 'https://a.k8s.example' }).audience).toBe(
      'https://a.k8s.example',
    );
  });

  it('refuses names Kubernetes would not take and audiences that are not absolute URIs', () => {
    for (const name of ['', '-a', 'a-', 'a_b', 'a.b', 'x'.repeat(64)])
      expect(ClusterName.safeParse(name).success, name).toBe(false);
    for (const audience of ['prod', 'kubernetes: prod', 'https://a#x', '', `a:${'x'.repeat(2048)}`])
      expect(ClusterAudience.safeParse(audience).success, audience).toBe(false);
    expect(CreateClusterInput.safeParse({ name: 'a', extra: 1 }).success).toBe(false);
  });

  it('takes requireMfa as a boolean only, and an update of requireMfa alone', () => {
    expect(CreateClusterInput.parse({ name: 'a', requireMfa: true })).toEqual({
      name: 'a',
      requireMfa: true,
    });
    expect(CreateClusterInput.safeParse({ name: 'a', requireMfa: 'yes' }).success).toBe(false);
    expect(UpdateClusterInput.parse({ requireMfa: false })).toEqual({ requireMfa: false });
    expect(UpdateClusterInput.safeParse({}).success).toBe(false);
  });
});

describe('Cluster and CreatedCluster', () => {
  it('take what the admin API answers', () => {
    expect(Cluster.parse(cluster)).toEqual(cluster);
    expect(Cluster.parse({ ...cluster, kubectlClientId: null }).kubectlClientId).toBeNull();
    const created = { cluster, apiKey: 'idg_ab12cd34_x', apiKeyId: 'k1', kubectlClientCreated: true };
    expect(CreatedCluster.parse(created)).toEqual(created);
    expect(CreatedCluster.safeParse({ ...created, apiKey: undefined }).success).toBe(false);
    expect(Cluster.safeParse({ ...cluster, createdAt: 'yesterday' }).success).toBe(false);
    expect(Cluster.safeParse({ ...cluster, requireMfa: undefined }).success).toBe(false);
  });
});
