/** A one-line progress display on a terminal; silent when the stream is not a terminal. */
export interface ProgressDisplay {
  update(line: string): void;
  stop(): void;
}

/**
 * An ora spinner on `stream` (stderr: stdout carries the command's one JSON value). A terminal that
 * reports no width (a pseudo-terminal nobody sized: `script`, some CI runners, `docker exec -t` before
 * its first resize) gets each new line once instead: ora divides by the width to count the lines it
 * must clear, and with 0 columns it clears for ever.
 */
export async function createProgressDisplay(stream: NodeJS.WriteStream): Promise<ProgressDisplay> {
  // Off a terminal ora would still print each text once; scripts get nothing but the result.
  if (stream.isTTY !== true) return { update: () => {}, stop: () => {} };
  if (!(stream.columns > 0)) return linePerChange(stream);
  // Imported here: only `--wait` at a terminal shows a spinner (ora is 50 ms of a command's start-up).
  const { default: ora } = await import('ora');
  const spinner = ora({ stream, discardStdin: false });
  let started = false;
  return {
    update(line: string) {
      if (!line) return;
      if (!started) {
        spinner.start(line);
        started = true;
      } else {
        spinner.text = line;
      }
    },
    stop() {
      if (started) spinner.stop();
    },
  };
}

function linePerChange(stream: NodeJS.WriteStream): ProgressDisplay {
  let last = '';
  return {
    update(line: string) {
      if (!line || line === last) return;
      last = line;
      stream.write(`${line}\n`);
    },
    stop() {},
  };
}
