// Step 20b: the changed-files bar at the side bar's default width (300 px)
// with a 120-character path: the path is cut in the middle (an ellipsis
// where the folders give way, the file's name whole), the whole path in
// the tooltip, Keep and Undo together on one line (under the path when the
// side bar is narrow), nothing wider than the panel.
import * as assert from 'node:assert/strict';
import { addRules, ask, chat, page, shot, step, until, waitIdle } from '../harness.mjs';

const dirs = 'src/components/dashboard/widgets/charts/timeseries/renderers/webgl/shaders/';
const longPath = dirs + 'x'.repeat(120 - dirs.length - '/fragment_shader.glsl'.length) + '/fragment_shader.glsl';

addRules({
  when: /write the shader at its long path/i,
  reply: { tool: { name: 'write_file', args: { path: longPath, content: 'void main() {}\n' } } },
  afterTool: { text: ['Wrote the shader.'] },
});

/** The primary side bar's width, in CSS pixels. */
async function sideBarWidth() {
  return page.locator('.part.sidebar').first().evaluate((e) => e.getBoundingClientRect().width);
}

/** Drags the side bar's edge until the side bar is width px wide. */
async function setSideBarWidth(width) {
  const box = await page.locator('.part.sidebar').first().boundingBox();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width - 1, y);
  await page.mouse.down();
  await page.mouse.move(box.x + width - 1, y, { steps: 8 });
  await page.mouse.up();
  await until(`the side bar ${width} px wide`, async () => Math.abs((await sideBarWidth()) - width) <= 2, 10_000);
}

step('20b. changed-files bar at 300 px with a 120-character path: cut in the middle, whole path in the tooltip, Keep/Undo on one line', async () => {
  assert.equal(longPath.length, 120);
  const bar = chat().locator('section.filesbar');
  if (!(await bar.isHidden())) {
    await bar.locator('button.fb-keep-all').click();
    await until('the bar empty', async () => bar.isHidden());
  }
  await ask('Write the shader at its long path');
  await waitIdle();
  const row = bar.locator(`.fb-file[data-path="${longPath}"]`);
  await row.waitFor({ timeout: 30_000 });
  const width = await sideBarWidth();
  await setSideBarWidth(300);
  const m = await row.evaluate((li) => {
    const r = (sel) => li.querySelector(sel).getBoundingClientRect();
    const lead = li.querySelector('.fb-lead');
    const tail = li.querySelector('.fb-tail');
    return {
      row: li.getBoundingClientRect().toJSON(), name: r('.fb-name').toJSON(), keep: r('.fb-keep').toJSON(), undo: r('.fb-undo').toJSON(),
      page: document.documentElement.clientWidth, leadCut: lead.scrollWidth > lead.clientWidth, tailWhole: tail.scrollWidth <= tail.clientWidth,
      tail: tail.textContent, ellipsis: getComputedStyle(lead).textOverflow, title: li.querySelector('.fb-name').title,
    };
  });
  assert.ok(m.row.right <= m.page + 0.5, `the row fits the panel: ${JSON.stringify(m)}`);
  assert.ok(m.name.right <= m.row.right + 0.5 && (m.name.right <= m.keep.left || m.name.bottom <= m.keep.top), `the path gives way to Keep/Undo: ${JSON.stringify(m)}`);
  assert.ok(Math.abs(m.keep.top - m.undo.top) < 2, `Keep and Undo on one line: ${JSON.stringify(m)}`);
  assert.ok(m.undo.right <= m.row.right + 0.5, 'Undo inside the row');
  assert.ok(m.leadCut && m.ellipsis === 'ellipsis', 'the folders are cut, with an ellipsis');
  assert.ok(m.tailWhole && m.tail === 'fragment_shader.glsl', `the file's name whole: ${m.tail} (${JSON.stringify(m)})`);
  const stat = await row.locator('.fb-stat').evaluate((e) => e.getBoundingClientRect().toJSON());
  assert.ok(m.name.right <= stat.left + 0.5 || m.name.bottom <= stat.top + 0.5, 'the path ends before the counts: nothing drawn over another');
  assert.ok(m.title.startsWith(longPath), 'the whole path in the tooltip');
  const head = await bar.locator('.fb-head').evaluate((h) => ['.fb-toggle', '.fb-keep-all', '.fb-undo-all'].map((s) => h.querySelector(s).getBoundingClientRect().top));
  assert.ok(Math.max(...head) - Math.min(...head) < 4, `the bar's header on one line: ${head}`);
  await row.scrollIntoViewIfNeeded();
  await shot('20b', 'bar-300px-long-path');
  // The bar cleared and the side bar as it was, for the steps after this one.
  await bar.locator('button.fb-keep-all').click();
  await until('the bar empty', async () => bar.isHidden());
  await setSideBarWidth(Math.round(width));
}, 0);
