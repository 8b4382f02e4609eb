// End-to-end tests of the Loom extension inside real VS Code: code-server
// (VS Code in the browser, on Node 24) driven by Debian's Chromium through
// playwright-core, a loom-lsp built from this checkout, and a scripted
// OpenAI-compatible model on loopback. It goes through the issues' steps as
// a user would, screenshots each, and writes the times it measured
// (prompt -> first text, Stop -> idle, approval -> running, reload ->
// redrawn, ...) to times.json beside the screenshots.
//
//   LOOM_LSP=/path/to/loom-lsp VSIX=/path/to/loom.vsix node --test run.mjs
//
// Environment: LOOM_LSP and VSIX (required), CHROMIUM (default
// /usr/bin/chromium), E2E_SCREENSHOTS (default ./screenshots), E2E_STEPS
// (e.g. 1,18: only those steps, while developing), E2E_KEEP, E2E_TRACE.
//
// The harness is harness.mjs; the steps are steps/*.mjs, imported here in
// the order they run (they share one window: a later step may rely on what
// an earlier one left).
import './harness.mjs';
import './steps/01-basics.mjs';
import './steps/07-reload.mjs';
import './steps/07b-reload-time.mjs';
import './steps/08-commands.mjs';
import './steps/11-approval.mjs';
import './steps/12b-every-command.mjs';
import './steps/13-composer.mjs';
import './steps/15-axe.mjs';
import './steps/16-reload-mid-answer.mjs';
import './steps/17-first-run.mjs';
import './steps/18-review.mjs';
import './steps/19-rewind.mjs';
import './steps/20-filesbar.mjs';
import './steps/20b-narrow-bar.mjs';
import './steps/21-conversations.mjs';
import './steps/21b-palette-new.mjs';
import './steps/22-model-picker.mjs';
import './steps/23-plan-mode.mjs';
import './steps/24-images-slash.mjs';
import './steps/25-ts-diagnostics.mjs';
import './steps/26-fetch.mjs';
import './steps/27-inline-completion.mjs';
