/** A one-line progress display on a terminal; silent when the stream is not a terminal. */
export interface ProgressDisplay {
  update(line: string): void;
  stop(): void;
}

/** An ora spinner on `stream` (stderr: stdout carries the command's one JSON value). */
export async function createProgressDisplay(stream: NodeJS.WriteStream): Promise<ProgressDisplay> {
  // Off a terminal ora would still print each text once; scripts get nothing but the result.
  if (stream.isTTY !== true) return { update: () => {}, stop: () => {} };
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
