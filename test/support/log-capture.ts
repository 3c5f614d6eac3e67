/** A pino destination that keeps every line, parsed, for exact assertions on what was logged. */
export class LogCapture {
  readonly lines: Array<Record<string, unknown>> = [];

  write(line: string): void {
    this.lines.push(JSON.parse(line) as Record<string, unknown>);
  }

  /** The lines with this message, without the fields every line has (time, pid). */
  withMessage(msg: string): Array<Record<string, unknown>> {
    return this.lines
      .filter((line) => line.msg === msg)
      .map((line) => Object.fromEntries(Object.entries(line).filter(([key]) => key !== 'time' && key !== 'pid')));
  }
}
