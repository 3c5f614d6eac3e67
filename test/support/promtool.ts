import { spawnSync } from 'node:child_process';

/** Prometheus's own checker (Debian's `prometheus` package, which .ci/run installs when missing). */
export const PROMTOOL = 'promtool';

/** Why a promtool check is skipped here, or false when promtool runs. */
export const promtoolMissing =
  spawnSync(PROMTOOL, ['--version'], { stdio: 'ignore' }).status === 0
    ? false
    : 'needs promtool (apt-get install prometheus; .ci/run installs it)';

/** Runs `promtool <args>` with `input` on its standard input. */
export function promtool(args: string[], input = ''): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL, args, { input, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}
