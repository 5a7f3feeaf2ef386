import type { TestProject } from 'vitest/node';
import { KUBECTL, provideTools } from '../../server/test/helpers/tools.js';

/**
 * Finds kubectl once for the run, by the rule every test that drives an outside program follows
 * (`apps/server/test/helpers/tools.ts`): IDGATE_TEST_KUBECTL, else Debian's kubectl where .ci/run
 * extracts it, else `kubectl` on PATH; else its tests skip with one notice (on CI the run fails).
 */
export default function setup(project: TestProject): void {
  provideTools(project, [KUBECTL]);
}
