import type { TestProject } from 'vitest/node';
import { HELM, KUBECTL, provideTools } from '../../apps/server/test/helpers/tools.js';

/** helm renders the chart and kubectl the kustomization; on CI a missing one fails the run. */
export default function setup(project: TestProject): void {
  provideTools(project, [HELM, KUBECTL]);
}
