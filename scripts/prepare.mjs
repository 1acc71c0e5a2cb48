/**
 * `prepare` (package.json): builds dist/ after `npm install` in a checkout, and before `npm pack` or
 * `npm publish`. Skipped when `npx durable-memory` runs in a checkout: npx links the checkout into
 * its cache and runs `prepare` on the link, which rebuilt dist/ (a minute or more) under the feet of
 * a running `npm start` on first use. The checkout's own dist/ is what npx runs then; `npm run build`
 * rebuilds it on purpose.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import process from 'node:process';

if (process.env.npm_command === 'exec' && existsSync('dist/src/cli/main.js')) process.exit(0);
const npm = process.env.npm_execpath;
const build = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(build.status ?? 1);
