/**
 * Makes (or brings up to date) the cached Python venv of python-venv.ts and prints its interpreter.
 * `npm test` runs it beside the static checks: on a fresh clone the venv's `pip install` from PyPI
 * takes most of a minute, mostly waiting on the network, and the integration files that need it
 * would otherwise wait for it with a test slot held.
 */
import { pythonVenv } from './python-venv.js';

const { python } = await pythonVenv();
console.log(`python venv: ${python}`);
