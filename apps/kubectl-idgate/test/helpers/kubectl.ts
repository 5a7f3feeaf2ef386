import { toolPath } from '../../../server/test/helpers/tools.js';

/**
 * The kubectl the run found (`global-setup.ts`); undefined when there is none, and the tests that
 * drive it skip: `describe.skipIf(KUBECTL === undefined)`.
 */
export const KUBECTL = toolPath('kubectl');
