// The e2e suite's probe: an empty extension activated as early as VS Code
// activates any ("*"). Its status item's time after a window reload is the
// floor of every extension's activation in that window (the workbench's
// and the extension host's own start); its text says how long the
// extension host process had been running when it activated.
const vscode = require('vscode');

exports.activate = () => {
  const s = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  s.text = `Probe: ${Math.round(process.uptime() * 1000)} ms`;
  s.show();
};
