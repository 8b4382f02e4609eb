// Bundles the extension and its language client apart (node, CommonJS;
// vscode is external) and the chat
// webview's script and stylesheet (browser) into dist/.
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const common = { bundle: true, minify: production, sourcemap: !production, logLevel: 'warning' };

await Promise.all([
  // vscode-languageclient goes to dist/client.js, which the extension
  // requires after its activation (src/client.ts): activation loads only
  // the extension's own code.
  esbuild.build({
    ...common,
    entryPoints: { extension: 'src/extension.ts', client: 'src/client.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    external: ['vscode', './client.js'],
  }),
  esbuild.build({
    ...common,
    entryPoints: { webview: 'src/webview/main.ts' },
    outdir: 'dist',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  }),
  esbuild.build({
    ...common,
    entryPoints: { webview: 'src/webview/style.css' },
    outdir: 'dist',
  }),
]);
