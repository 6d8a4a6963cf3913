// Where a command writes and asks: the terminal in the real CLI, a buffer in tests.
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Asks a question at the terminal; undefined when there is no terminal to ask at. */
  ask(prompt: string): Promise<string | undefined>;
}
