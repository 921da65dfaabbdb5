// Tests of the page's link (the URL hash both views keep their state in): a cut-off escape or
// unknown keys load the defaults and say so, steps are bounded, a long text stays out of the link,
// an edit that no longer fits its array leaves the link.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/links.test.mjs
//
// Tiny models and a few steps; no timing assertions (a wait has a timeout, never a bound on speed).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEnv, stopEnv, newPage, idle, snapshot, assertNoProblems, checkAgainstBinding } from './harness.mjs';
import { WIDE, hashOf, X, ui } from './page-helpers.mjs';

describe("attnlab page: the link: what a page's URL holds, what it refuses and what it says it ignored", () => {
  before(startEnv);
  after(stopEnv);

  test('a link with a cut-off % escape or unknown values loads the defaults and says what was ignored', async (t) => {
    const cases = [
      ['#v=softmax%', { variant: 'softmax' }, /v/],
      ['#n=%', { variant: 'softmax', n: 16 }, /n=/],
      ['#v=nope', { variant: 'softmax' }, /nope/],
      ['#v=linear&n=12&seed=5&preset=nope&o.linear.eps=abc&e.q=96~3:0.5,7:NaN', { variant: 'linear', n: 12 }, /preset=nope.*eps|eps.*preset=nope/],
      ['#v=taylor&n=10&seed=9&e.q=80~3:0.5,7:-1%2', { variant: 'taylor', n: 10 }, /e\.q/],
      ['#n=0&d=1.5&dv=99999&zz=1', { variant: 'softmax', n: 16 }, /zz/],
      // a bare word is an unknown key too (the Experiment view's link is view=experiment)
      ['#experiment', { variant: 'softmax', n: 16 }, /experiment=\(empty\) \(unknown key\)/],
    ];
    for (const [hash, want, says] of cases) {
      const page = await newPage(t, { hash });
      const snap = await snapshot(page);
      assert.equal(snap.variant, want.variant, `${hash}: variant`);
      if (want.n) assert.equal(snap.inputs.n, want.n, `${hash}: n`);
      assert.equal(snap.error, null, `${hash}: the page computes`);
      assert.equal(await page.isVisible('#hash-warning'), true, `${hash}: a visible message`);
      const text = await page.textContent('#hash-warning');
      assert.match(text, /ignored/i);
      assert.match(text, says, `${hash}: the message names what was ignored: ${text}`);
      assert.ok((await ui(page)).hashIgnored.length >= 1);
      assert.doesNotMatch(page.url(), /%$|NaN|nope|zz=/, `${hash}: the URL no longer has the bad part (${page.url()})`);
      checkAgainstBinding(snap, hash);
      assertNoProblems(page);
    }
    // valid parts of a link whose last part was cut off are kept
    const kept = await newPage(t, { hash: '#v=taylor&n=10&seed=9&e.q=80~3:0.5,7:-1%2' });
    assert.equal(await kept.inputValue('#seed'), '9');
    // a bad hash typed into a page that is already open
    const page = await newPage(t);
    await page.evaluate(() => (location.hash = '#v=dense&n=%'));
    await page.waitForFunction(() => !document.querySelector('#hash-warning').hidden);
    await idle(page);
    assert.equal((await snapshot(page)).variant, 'dense');
    assertNoProblems(page);
  });

  test('links: steps are bounded, a cut-off escape gets one banner, unknown keys are named, a long text stays out of the link and off the keystroke path', async (t) => {
    const big = await newPage(t, { hash: hashOf({ steps: '1e9' }), viewport: WIDE });
    assert.equal(await big.isVisible('#hash-warning'), true);
    assert.match(await big.textContent('#hash-warning'), /x\.steps=1e9 \(steps must be a whole number from 1 to 20000/);
    assert.equal((await X(big, (x) => x.config())).train.steps, 400, 'the task\'s default instead');
    assert.equal(await big.getAttribute('#x-steps', 'max'), '20000');
    assertNoProblems(big);

    const cut = await newPage(t, { hash: `${hashOf({ seed: 5 })}&x.evalBatch=1%`, viewport: WIDE });
    const banners = await cut.$$eval('.warn-banner, [role=status].page-error', (bs) => bs.filter((b) => b.offsetParent).map((b) => b.textContent));
    assert.equal(banners.length, 1, `one banner, not ${banners.length}: ${banners.join(' | ')}`);
    assert.match(banners[0], /x\.evalBatch/);
    assert.equal((await X(cut, (x) => x.config())).seed, 5, 'the rest of the link is kept');
    assertNoProblems(cut);

    const unknown = await newPage(t, { hash: `${hashOf()}&x.variants=softmax,dense`, viewport: WIDE });
    assert.equal(await unknown.isVisible('#hash-warning'), true, 'an unknown key is named');
    assert.match(await unknown.textContent('#hash-warning'), /x\.variants=softmax,dense \(unknown key/);
    assertNoProblems(unknown);

    const page = await newPage(t, { hash: hashOf(), viewport: WIDE });
    await page.selectOption('#x-task', 'text');
    await page.click('#x-source-own');
    const text = 'The quick brown fox jumps over the lazy dog, then naps in the warm sun. '.repeat(2800).slice(0, 200000);
    await page.fill('#x-text', text);
    await page.waitForFunction(() => /too long for a link/.test(document.querySelector('#x-text-note')?.textContent ?? ''), null, { timeout: 10000 });
    const hash = await page.evaluate(() => location.hash);
    assert.ok(hash.length < 4000, `the link holds ${hash.length} characters`);
    assert.equal((await X(page, (x) => x.text())).length, 200000, 'the text itself is kept for training');
    // twenty keystrokes: the form is read once the typing pauses, not twenty times (counted in
    // the link's writes: one for the form read, one when its estimate ends; the estimate of the
    // text filled in above has ended first, so that its end is not counted)
    await page.waitForFunction(() => !window.__attnlab.experiment.estimating(), null, { timeout: 30000 });
    const writes = await page.evaluate(async () => {
      let n = 0;
      const replace = history.replaceState.bind(history);
      history.replaceState = (...a) => { n++; return replace(...a); };
      const box = document.querySelector('#x-text');
      for (let i = 0; i < 20; i++) {
        box.value += 'x';
        box.dispatchEvent(new Event('input', { bubbles: true }));
      }
      const during = n;
      await new Promise((r) => setTimeout(r, 1000));
      history.replaceState = replace;
      return { during, after: n };
    });
    assert.equal(writes.during, 0, 'no link written per keystroke');
    assert.ok(writes.after <= 2, `the link written ${writes.after} times after twenty keystrokes`);
    assertNoProblems(page);
  });

  test('an edit that no longer fits its array after a size change leaves the tab and the link', async (t) => {
    const page = await newPage(t, { viewport: WIDE });
    const cell = page.locator('input.cell[data-array="q"][data-index="2"]');
    await cell.fill('1.5');
    await cell.press('Enter');
    await idle(page);
    assert.match(page.url(), /e\.q=/);
    assert.equal(await page.evaluate(() => document.querySelector('#tab-q').classList.contains('edited')), true);
    await page.fill('#dim-n', '20');
    await idle(page);
    assert.equal(await page.evaluate(() => document.querySelector('#tab-q').classList.contains('edited')), false, 'the tab is no longer marked edited');
    assert.doesNotMatch(page.url(), /e\.q=/, 'the link no longer holds the edit');
    assertNoProblems(page);
  });
});
