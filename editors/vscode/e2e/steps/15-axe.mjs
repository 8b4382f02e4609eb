// Step 15: axe-core over the panel in four themes.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

step('15. axe-core: no serious violations in the panel in Dark, Light, High Contrast and High Contrast Light', async () => {
  const axeSource = fs.readFileSync(path.join(here, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  const themes = [
    // workbench.colorTheme takes the theme's id (theme-defaults' package.json).
    ['Dark Modern', 'vscode-dark'],
    ['Light Modern', 'vscode-light'],
    ['Default High Contrast', 'vscode-high-contrast'],
    ['Default High Contrast Light', 'vscode-high-contrast-light'],
  ];
  const found = {};
  for (const [theme, cls] of themes) {
    await editUserSettings({ 'workbench.colorTheme': theme });
    await until(`the panel in ${theme}`, async () => chat().locator('body').evaluate((b, c) => b.classList.contains(c), cls), 30_000, 100);
    const frame = await (await chat().locator('body').elementHandle()).ownerFrame();
    await frame.evaluate(axeSource);
    const res = await frame.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const serious = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    found[theme] = serious.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
    await shot('15', cls);
  }
  await editUserSettings({});
  const all = Object.entries(found).filter(([, v]) => v.length > 0);
  assert.equal(all.length, 0, `serious axe violations:\n${all.map(([t, v]) => `${t}:\n  ${v.join('\n  ')}`).join('\n')}`);
});
