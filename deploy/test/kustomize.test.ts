import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { toolPath } from '../../apps/server/test/helpers/tools.js';
import { parseObjects, validateObject } from './kubernetes-schemas.js';

const kustomization = fileURLToPath(new URL('../kubernetes/', import.meta.url));
const kubectl = toolPath('kubectl');

describe.skipIf(kubectl === undefined)('deploy/kubernetes (kubectl kustomize)', () => {
  it('renders, and every object is valid against the Kubernetes schemas', () => {
    const objects = parseObjects(
      execFileSync(kubectl as string, ['kustomize', kustomization], { encoding: 'utf8' }),
    );
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/idgate-config',
      'Deployment/idgate',
      'PodDisruptionBudget/idgate',
      'Service/idgate',
    ]);
    for (const object of objects) expect(() => validateObject(object)).not.toThrow();
    const deployment = objects.find((o) => o.kind === 'Deployment');
    // kustomization.yaml's images: entry reaches the Deployment.
    expect(deployment?.spec.template.spec.containers[0].image).toBe('registry.example.com/idgate:0.1.0');
  });
});
