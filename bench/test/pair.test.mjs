import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pairSummary } from '../src/pair.mjs';

const pair = (
  /** @type {number} */ ccRps,
  /** @type {number} */ ccCpu,
  /** @type {number} */ exRps,
  /** @type {number} */ exCpu,
  /** @type {number} */ ccLoop = 1,
  /** @type {number} */ exLoop = 1,
) => ({
  cc: { rps: ccRps, cpu: ccCpu, loop: ccLoop },
  exchange: { rps: exRps, cpu: exCpu, loop: exLoop },
});

describe('pairSummary', () => {
  it('takes the median of the pairs’ ratios, not the ratio of the averages', () => {
    // One slow round (the machine busy for both loads) must not move the figure.
    const summary = pairSummary([
      pair(3000, 500, 2000, 700, 200, 400),
      pair(1000, 1500, 900, 1600, 500, 600),
      pair(3300, 480, 2000, 700, 150, 390),
    ]);
    assert.equal(summary.rate.median.toFixed(2), '1.50');
    assert.equal(summary.rate.min.toFixed(2), '1.11');
    assert.equal(summary.rate.max.toFixed(2), '1.65');
    assert.equal(summary.cpu.median.toFixed(2), '1.40');
    assert.equal(summary.loop.median.toFixed(2), '2.00');
    assert.equal(summary.loop.max.toFixed(2), '2.60');
  });

  it('averages the two middle pairs of an even count', () => {
    const summary = pairSummary([pair(1300, 1, 1000, 1), pair(1500, 1, 1000, 1)]);
    assert.equal(summary.rate.median.toFixed(2), '1.40');
  });
});
