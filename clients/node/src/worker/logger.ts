// Where the worker says what happened. The default writes warnings and
// errors to the console and keeps debug and info quiet.

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
}

export const consoleLogger: Logger = {
  debug() {},
  info() {},
  warn: (m, f) => console.warn(`onceq worker: ${m}`, f ?? ""),
  error: (m, f) => console.error(`onceq worker: ${m}`, f ?? ""),
};

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
