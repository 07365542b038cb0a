// The operator's web UI in a real browser (Debian's headless Chromium driven
// by playwright-core) against the single process: the landing page loads
// cleanly, the query page graphs a rate over pushed data and autocompletes a
// pushed metric name, and the status pages show the ring and the ingester's lag.
// Screenshots go to test/output/ui/ (git-ignored); look at them.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { AppProcess } from '@strata/local-cluster';
import { api, generateSeries, push, waitFor } from './support/client.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = join(import.meta.dirname, 'output', 'ui');
const METRIC = 'strata_ui_test_requests_total';
const SERIES = 3;

describe('web UI', { timeout: 600_000 }, () => {
  let sp: SingleProcess;
  let strata: AppProcess;
  let browser: Browser;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`);
    mkdirSync(SCREENSHOTS, { recursive: true });
    console.log(`screenshots in ${SCREENSHOTS}`);
    sp = await startSingleProcess('ui');
    strata = sp.strata;
    // A counter per series going up by 15 every 15s over the last 10 minutes: rate 1/s each.
    const now = Date.now();
    const res = await push(
      strata.url,
      generateSeries(METRIC, SERIES, 40, now - 40 * 15_000, 15_000, (s, i) => s * 1000 + i * 15),
    );
    assert.equal(res.status, 200, res.body);
    await waitFor('the pushed series to be queryable', async () => {
      const r = await api<unknown[]>(strata.url, '/prometheus/api/v1/series', { 'match[]': METRIC });
      return r.data.length === SERIES ? true : undefined;
    });
    // Root in a container: Chromium's sandbox needs user namespaces it may not have.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  });

  after(async () => {
    await browser?.close();
    await sp?.stop();
  });

  /** A page that records console errors and uncaught exceptions. */
  async function open(path: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${strata.url}${path}`);
    return { page, errors };
  }

  const shot = async (page: Page, name: string) => {
    const path = join(SCREENSHOTS, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    console.log(`  screenshot ${path}`);
  };

  test('GET / is the landing page: links to the query page and every status page, no console errors', async () => {
    const { page, errors } = await open('/');
    await page.locator('main h1', { hasText: 'Strata' }).waitFor();
    // Page-side code as strings: this project type-checks without the DOM library.
    const links = await page.evaluate<string[]>(`[...document.querySelectorAll('main a')].map((a) => a.getAttribute('href'))`);
    for (const href of [
      '/ui/query',
      '/ui/status/services',
      '/ui/status/config',
      '/ui/status/ring',
      '/ui/status/ingester',
      '/ui/status/tenants',
      '/ui/status/compactor',
      '/ingester/partition-ring',
    ]) {
      assert.ok(links.includes(href), `the landing page links ${href} (has ${links.join(' ')})`);
    }
    await page.waitForLoadState('networkidle');
    await shot(page, 'landing');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the query page graphs sum(rate(...[1m])) over the pushed data', async () => {
    const expr = `sum(rate(${METRIC}[1m]))`;
    const { page, errors } = await open(`/ui/query?expr=${encodeURIComponent(expr)}&range=15m&tab=graph`);
    const canvas = page.locator('#graph canvas');
    await canvas.waitFor();
    await page.locator('#query-status', { hasText: '1 series' }).waitFor();
    assert.match((await page.locator('#graph .u-legend').innerText()).replace(/\s+/g, ' '), /\{\}/, 'the legend names the one series');
    // The line is drawn: pixels in the first series' colour (#3366cc), not just axes and grid.
    const lineColoured = await page.evaluate<number>(`(() => {
      const c = document.querySelector('#graph canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 0x33) < 40 && Math.abs(d[i + 1] - 0x66) < 40 && Math.abs(d[i + 2] - 0xcc) < 40 && d[i + 3] > 100) n++;
      return n;
    })()`);
    assert.ok(lineColoured > 50, `the graph draws the series line (${lineColoured} line-coloured pixels)`);
    await shot(page, 'query-graph');

    // The table view: the instant value of the rate, 3 series at 1/s each.
    await page.locator('#tab-table').click();
    const value = Number(await page.locator('#result-table td.value').first().innerText());
    // 1/s per series, less what rate() leaves unextrapolated at the window's newest edge.
    assert.ok(value > SERIES * 0.6 && value < SERIES * 1.1, `sum(rate) is about ${SERIES}/s, got ${value}`);
    await shot(page, 'query-table');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the editor autocompletes a pushed metric name and marks a syntax error', async () => {
    const { page, errors } = await open('/ui/query');
    await page.locator('.cm-content').click();
    await page.keyboard.type('strata_ui_te');
    const option = page.locator('.cm-tooltip-autocomplete li', { hasText: METRIC });
    await option.first().waitFor();
    await shot(page, 'query-autocomplete');
    await page.keyboard.press('Escape');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('sum(rate(');
    await page.keyboard.press('Escape');
    await page.locator('.cm-lintRange-error').first().waitFor();
    assert.notEqual((await page.locator('#syntax-error').innerText()).trim(), '', 'the syntax error is spelled out under the editor');
    await shot(page, 'query-syntax-error');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('status pages: the partition ring and the ingester with its lag; tenants with their series', async () => {
    const ring = await open('/ui/status/ring');
    await ring.page.locator('td', { hasText: 'ACTIVE' }).first().waitFor();
    const ringText = await ring.page.locator('main').innerText();
    assert.match(ringText, /ingester-zone-a-0/);
    await shot(ring.page, 'status-ring');
    await ring.page.close();

    const ing = await open('/ui/status/ingester');
    const lag = ing.page.locator('dt', { hasText: 'lag (records)' });
    await lag.waitFor();
    assert.equal(await lag.locator('xpath=following-sibling::dd[1]').innerText(), '0', 'caught up: no lag');
    assert.match(await ing.page.locator('main').innerText(), /running/);
    await shot(ing.page, 'status-ingester');
    await ing.page.close();

    const tenants = await open('/ui/status/tenants');
    const row = tenants.page.locator('tr', { hasText: 'anonymous' });
    await row.waitFor();
    assert.equal(await row.locator('td').nth(1).innerText(), String(SERIES));
    await shot(tenants.page, 'status-tenants');
    for (const p of ['services', 'config', 'compactor', 'overrides']) {
      await tenants.page.goto(`${strata.url}/ui/status/${p}`);
      await tenants.page.locator('.section').first().waitFor();
      await shot(tenants.page, `status-${p}`);
    }
    assert.deepEqual([...ring.errors, ...ing.errors, ...tenants.errors], []);
    await tenants.page.close();
  });

  test("/api/v1/user_stats answers Mimir's fields for the tenant", async () => {
    const res = await fetch(`${strata.url}/prometheus/api/v1/user_stats`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as Record<string, number>;
    assert.deepEqual(Object.keys(body).sort(), ['apiIngestionRate', 'ingestionRate', 'numSeries', 'ruleIngestionRate']);
    assert.equal(body.numSeries, SERIES);
    assert.equal(body.ruleIngestionRate, 0);
  });
});
