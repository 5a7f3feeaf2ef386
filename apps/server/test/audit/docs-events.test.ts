import { AUDIT_EVENT_SCHEMAS } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { readDoc } from '../helpers/docs.js';

// The event types' table is in the page's first part, before `## Reading the trail` (later tables,
// such as the chain's kinds of break, name other things).
const section = readDoc('docs/operating/audit.md').split(/^## /m)[0] as string;

// The audit page's table of event types cannot drift from the schemas: one row per type, naming
// exactly the fields of its `details`, in order.
describe('the audit event table of docs/operating/audit.md', () => {
  const rows = new Map(
    [...section.matchAll(/^\| `([a-z.-]+)` \| ([^|]+) \|/gm)].map((m) => [
      m[1] as string,
      [...(m[2] as string).matchAll(/`([A-Za-z]+)`/g)].map((f) => f[1]),
    ]),
  );

  it('has a row for every event type, and no other', () => {
    expect([...rows.keys()]).toEqual(Object.keys(AUDIT_EVENT_SCHEMAS));
  });

  it.each(Object.entries(AUDIT_EVENT_SCHEMAS))('lists the details fields of %s', (type, schema) => {
    expect(rows.get(type)).toEqual(Object.keys(schema.shape.details.shape));
  });
});
