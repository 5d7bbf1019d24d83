import { existsSync, mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeFleet, type SeedStep } from '../../lib/local/seed.ts';
import { startServer, type LocalServer } from '../../lib/local/server.ts';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

/** Debian's chromium (apt-get install chromium; .ci/run installs it), or CHROMIUM_PATH. */
const CHROMIUM = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
].find((p): p is string => !!p && existsSync(p));
const SHOTS = fileURLToPath(new URL('../../test-results/', import.meta.url));

if (!CHROMIUM) {
  // In CI a missing browser is a failure (.ci/run installs it); on a developer's machine without one the page's tests are skipped, saying why.
  if (process.env.CI)
    throw new Error('the rollout page is tested in Chromium: apt-get install chromium (or set CHROMIUM_PATH)');
  console.warn('Skipping the rollout page tests: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');
}

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
let browser: Browser;
let page: Page;
const ok = (args: string[], input?: string) => cubOk(cub)(args, input);
const run = async (steps: SeedStep[]) => {
  for (const s of steps) await ok(s.args, s.input);
};
const shot = (name: string, p: Page = page) => p.screenshot({ path: `${SHOTS}rollout-${name}.png`, fullPage: true });
/** The page's globals the checks read, typed just enough (tests compile without the DOM library); used inside page.evaluate only. */
interface PageGlobals {
  document: {
    activeElement: { dataset?: Record<string, string> } | null;
    documentElement: { scrollWidth: number };
    getElementById(id: string): { open?: boolean } | null;
  };
  localStorage: { setItem(k: string, v: string): void };
}
/** A Space's cell in a Stage of the grid. */
const cell = (stage: string, space: string) => `section[data-stage="${stage}"] li.cell[data-space="${space}"]`;
const text = async (selector: string) => (await page.locator(selector).first().innerText()).replace(/\s+/g, ' ').trim();

describe.skipIf(!CHROMIUM)('the rollout page in Chromium, against a local server with the acme fleet', () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    env = await startEnv();
    cub = cubAt(env.url, env.api.token!);
    await run(acmeFleet(fileURLToPath(new URL('../fixtures/acme', import.meta.url))));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30000);
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  it('asks for a token, then lists the change orders in flight, filtered by a where expression', async () => {
    // ?poll=300: the page polls often, so a change made by cub shows up within the test's patience.
    await page.goto(`${env.url}/ui/?poll=300`);
    await page.waitForSelector('#token');
    expect(await page.locator('h1').innerText()).toBe('Sign in with a token');
    await page.fill('#token', 'not-a-token');
    await page.press('#token', 'Enter');
    await page.waitForSelector('#token');
    await page.fill('#token', env.api.token!);
    await page.press('#token', 'Enter');
    await page.waitForSelector('#changeorders tr[data-slug="release-v452"]');
    expect(await text('#changeorders tr[data-slug="release-v452"]')).toBe(
      'release-v452 acme-base New — Release v452: bump the image tag',
    );
    await page.fill('#where', "Slug = 'nothing-like-it'");
    await page.press('#where', 'Enter');
    await page.waitForSelector('text=0 change order(s)');
    expect(await page.locator('#changeorders tbody tr').count()).toBe(0);
    await page.fill('#where', 'Slug = ');
    await page.press('#where', 'Enter');
    await page.waitForSelector('#alert:not([hidden])');
    expect(await page.locator('#alert').innerText()).toMatch(/^HTTP 400: /);
    await page.fill('#where', "State = 'New'");
    await page.press('#where', 'Enter');
    await page.waitForSelector('text=1 change order(s)');
    await shot('list');
    await page.click('#changeorders a:text("release-v452")');
    await page.waitForSelector('section[data-stage="dev"]');
  });

  it('shows the seed’s rollout before any promotion: dev is next and open, every Space waits', async () => {
    expect(await page.getAttribute('section[data-stage="dev"]', 'data-status')).toBe('Next');
    expect(await page.getAttribute('section[data-stage="staging"]', 'data-status')).toBe('Waiting');
    expect(await page.locator('li.cell').count()).toBe(5);
    expect(await page.getAttribute(cell('dev', 'acme-dev'), 'data-state')).toBe('waiting');
    expect(await text(cell('dev', 'acme-dev'))).toBe('acme-dev Waiting No release yet');
    expect(await page.getAttribute('#next', 'data-open')).toBe('true');
    expect(await text('#next h2')).toBe('Next: dev open');
    expect(await text('[data-field=co-state]')).toBe('State New');
    await shot('new');
  });

  it('promotes dev from the page: a dry-run preview first, then the promotion, and the grid follows', async () => {
    await page.click('[data-action=promote]');
    await page.waitForSelector('#promotion tr[data-space="acme-dev"]');
    expect(await text('[data-field=preview-message]')).toMatch(
      /^Would promote change order into stage 'dev': 1 of 1 space\(s\)/,
    );
    expect(await text('#promotion tr[data-space="acme-dev"]')).toMatch(
      /^acme-dev Promote config Mark, deployment Upgrade$/,
    );
    // The preview wrote nothing.
    expect(
      JSON.parse(await ok(['changeorder', 'get', '--space', 'acme-base', 'release-v452', '-o', 'json']))
        .ResolvedSpaceIDs,
    ).toHaveLength(1);
    await shot('promote-preview');
    await page.click('[data-action=confirm-promote]');
    await page.waitForSelector('[data-field=result-message]');
    expect(await text('[data-field=result-message]')).toMatch(
      /^Promoted change order into stage 'dev': 1 of 1 space\(s\)/,
    );
    await page.click('dialog [data-action=close]');
    await page.waitForSelector('section[data-stage="dev"][data-status="Reached"]');
    expect(await page.getAttribute(cell('dev', 'acme-dev'), 'data-state')).toBe('taken');
    expect(await page.getAttribute(`${cell('dev', 'acme-dev')} [data-gate="Released"]`, 'data-satisfied')).toBe(
      'false',
    );
    expect(await page.getAttribute(`${cell('dev', 'acme-dev')} [data-gate="Validated"]`, 'data-satisfied')).toBe(
      'true',
    );
    expect(await text('#next h2')).toBe('Next: staging blocked');
    expect(await text('#next [data-gate="Released"]')).toMatch(
      /^Released · acme-dev has taken change order 'release-v452' but has not released it Opens: publish a release of the change there: cub release publish acme-dev/,
    );
    // The same promotion through cub now finds nothing to do: the page went through the same API.
    expect(
      await ok(['variant', 'promote', '--change-order', 'acme-base/release-v452', '--target-stage', 'dev']),
    ).toMatch(/acme-dev\s+Unchanged/);
  });

  it('updates live as a release is published and the deploy tool reports it healthy', async () => {
    await ok(['release', 'publish', '--revision', 'ChangeOrder:acme-base/release-v452', 'acme-dev']);
    await page.waitForSelector(
      `${cell('dev', 'acme-dev')} [data-field=release]:has-text("Release #1 · carries the change")`,
    );
    expect(await text(`${cell('dev', 'acme-dev')} [data-field=live]`)).toBe('Not reported yet');
    await ok([
      'release',
      'report',
      '--space',
      'acme-dev',
      '--sync',
      'Synced',
      '--health',
      'Healthy',
      '--reporter',
      'argocd',
    ]);
    await page.waitForSelector(`${cell('dev', 'acme-dev')} [data-field=live]:has-text("Healthy")`);
    expect(await text(`${cell('dev', 'acme-dev')} [data-field=live]`)).toMatch(/^Synced Healthy \d+s ago$/);
    await page.waitForSelector('#next[data-open="true"]');
    expect(await text('#next h2')).toBe('Next: staging open');
    await shot('dev-healthy');
  });

  it('is driven from the keyboard alone: Tab to Promote, Enter, Enter', async () => {
    await page.locator('body').focus();
    let focused = '';
    for (let i = 0; i < 40 && focused !== 'promote'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(
        () => (globalThis as unknown as PageGlobals).document.activeElement?.dataset?.action ?? '',
      );
    }
    expect(focused).toBe('promote');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#promotion tr[data-space="acme-staging-use1"]');
    expect(
      await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.dataset?.action),
    ).toBe('confirm-promote');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-field=result-message]');
    expect(await text('[data-field=result-message]')).toMatch(
      /^Promoted change order into stage 'staging': 2 of 2 space\(s\)/,
    );
    await page.keyboard.press('Escape');
    expect(
      await page.evaluate(() => (globalThis as unknown as PageGlobals).document.getElementById('dialog')?.open),
    ).toBe(false);
    await page.waitForSelector('section[data-stage="staging"][data-status="Reached"]');
  });

  it('shows approvals recorded and missing, and approves in one Space and over a Stage', async () => {
    const euw1 = cell('staging', 'acme-staging-euw1');
    await page.waitForSelector(`${euw1} [data-approval="one-approver"]`);
    expect(await page.getAttribute(`${euw1} [data-approval="one-approver"]`, 'data-missing')).toBe('1');
    expect(await text(`${euw1} [data-approval="one-approver"]`)).toBe('one-approver: 0 of 1 — 1 missing');
    await page.click(`${euw1} [data-action=approve-space]`);
    await page.fill('#approve-note', 'looks right');
    await page.click('[data-action=confirm-approve]');
    await page.waitForSelector('[data-field=approve-result]');
    expect(await text('[data-field=approve-result]')).toBe('acme-staging-euw1: approved');
    await page.click('dialog [data-action=close]');
    await page.waitForSelector(`${euw1} [data-approval="one-approver"][data-missing="0"]`);
    expect(await text(`${euw1} [data-approval="one-approver"]`)).toBe('one-approver: 1 of 1 (admin)');
    await page.click('[data-action=approve-stage]');
    await page.click('[data-action=confirm-approve]');
    await page.waitForSelector('[data-field=approve-result]');
    expect(await text('[data-field=approve-result]')).toMatch(/acme-staging-use1: approved/);
    await page.click('dialog [data-action=close]');
    await page.waitForSelector(
      `${cell('staging', 'acme-staging-use1')} [data-approval="one-approver"][data-missing="0"]`,
    );
    expect(await page.locator('[data-action=approve-stage]').count()).toBe(0);
  });

  it('shows holds in force and why the next stage is blocked, at 1280 px and on a phone', async () => {
    await ok(['hold', 'create', 'freeze-euw1', '--space', 'acme-prod-euw1', '--reason', 'datacenter move']);
    await page.waitForSelector('#holds li[data-hold="freeze-euw1"]');
    expect(await text('#holds li[data-hold="freeze-euw1"]')).toBe(
      'freeze-euw1 on space acme-prod-euw1: datacenter move (placed by admin; blocks promote)',
    );
    // A freeze over the other prod Space: listed with its state and what it covers, and a gate of the next promotion.
    await ok([
      'window',
      'create',
      'quarter-close',
      '--space',
      'acme-prod-use1',
      '--deny',
      '--start',
      '2026-01-01T00:00:00Z',
      '--end',
      '2099-01-01T00:00:00Z',
      '--reason',
      'quarter close',
    ]);
    await page.waitForSelector('#windows li[data-window="quarter-close"][data-active="true"]');
    expect(await text('#windows li[data-window="quarter-close"]')).toBe(
      'quarter-close freeze in force on space acme-prod-use1: 2026-01-01T00:00:00.000Z to 2099-01-01T00:00:00.000Z; in force until 2099-01-01T00:00:00.000Z. Over acme-prod-use1. quarter close (by admin; blocks promote)',
    );
    expect(await page.locator('#next [data-gate="Window"][data-satisfied="false"]').count()).toBe(1);
    // The timeline is read when its panel is opened: prod's ETA is up to people here (a hold, releases to come).
    await page.click('#timeline summary');
    await page.waitForSelector('#timeline [data-field="eta"]');
    expect(await text('#timeline [data-field="eta"]')).toMatch(
      /^ETA for prod: unknown — stage prod is held \(freeze-euw1\): up to whoever lifts it; /,
    );
    expect(await page.locator('#timeline tr[data-stage="staging"] td').first().innerText()).toBe('staging');
    expect(await text('#next h2')).toBe('Next: prod blocked');
    expect(await page.locator('#next [data-gate="Hold"][data-satisfied="false"]').count()).toBe(1);
    expect(await page.locator('#next [data-gate="Released"][data-satisfied="false"]').count()).toBe(2);
    await shot('blocked-1280');
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.goto(`${env.url}/ui/?poll=300#/co/acme-base/release-v452`);
    await phone.evaluate(
      (t) => (globalThis as unknown as PageGlobals).localStorage.setItem('baton.token', t),
      env.api.token!,
    );
    await phone.reload();
    await phone.waitForSelector('section[data-stage="prod"] li.cell');
    // Nothing wider than the screen: no sideways scrolling.
    expect(
      await phone.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth),
    ).toBeLessThanOrEqual(390);
    const boxes = await phone
      .locator('section[data-stage="staging"] li.cell')
      .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().left));
    expect(new Set(boxes).size).toBe(1);
    await shot('blocked-phone', phone);
    await phone.close();
  });

  it('aborts the change order from the page, with the reason it records', async () => {
    await page.click('[data-action=abort]');
    await page.click('[data-action=confirm-abort]');
    await page.waitForSelector('dialog p.alert');
    expect(await page.locator('dialog p.alert').innerText()).toBe('Give the reason the change order records.');
    await page.fill('#abort-reason', 'v452 leaks memory');
    await page.click('[data-action=confirm-abort]');
    await page.waitForSelector('[data-field=co-state] .badge:has-text("Aborted")');
    expect(await page.isDisabled('[data-action=promote]')).toBe(true);
    expect(await page.isDisabled('[data-action=abort]')).toBe(true);
    expect(
      JSON.parse(await ok(['changeorder', 'get', '--space', 'acme-base', 'release-v452', '-o', 'json'])).AbortedReason,
    ).toBe('v452 leaks memory');
    await shot('aborted');
  });

  it('opened on this machine from a local server, takes the token from its context; asked under another name, does not', async () => {
    let server: LocalServer | undefined;
    try {
      server = await startServer(env.deps, { uiToken: () => env.api.token });
      const p = await browser.newPage();
      await p.goto(`${server.url}/ui/#/`);
      await p.waitForSelector('#changeorders');
      expect(await p.locator('#token').count()).toBe(0);
      // Signed out stays signed out, though the server would hand the token again.
      await p.click('[data-action=sign-out]');
      await p.waitForSelector('#token');
      await p.reload();
      await p.waitForSelector('#token');
      await p.close();
      const port = new URL(server.url).port;
      const ask = (host: string) =>
        new Promise<string>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path: '/ui/config.json', headers: { host } }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c));
            res.on('end', () => resolve(body));
          })
            .on('error', reject)
            .end();
        });
      expect(JSON.parse(await ask(`127.0.0.1:${port}`))).toEqual({ ApiUrl: '', Token: env.api.token });
      expect(JSON.parse(await ask(`rebound.example:${port}`))).toEqual({ ApiUrl: '' });
      const other = await fetch(`${server.url}/ui/../lib/local/seed.ts`);
      expect(other.status).toBe(404);
      expect((await fetch(`${server.url}/ui/secret.txt`)).status).toBe(404);
      expect((await fetch(`${server.url}/ui/`, { method: 'POST' })).status).toBe(405);
      const index = await fetch(`${server.url}/ui`, { redirect: 'manual' });
      expect([index.status, index.headers.get('location')]).toEqual([308, '/ui/']);
    } finally {
      await server?.close();
    }
  });
});
