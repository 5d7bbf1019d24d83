// Bundles the rollout page's script (web/src/app.ts → web/dist/app.js) for a browser: run by `npm install`
// (prepare) and before `npm test`, like cub's bundle. The page itself is web/index.html and web/app.css.
import { build } from 'esbuild';

await build({
  entryPoints: [new URL('./src/app.ts', import.meta.url).pathname],
  outfile: new URL('./dist/app.js', import.meta.url).pathname,
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: ['chrome110', 'firefox115', 'safari16'],
  minify: true,
  sourcemap: 'linked',
  logLevel: 'warning',
});
