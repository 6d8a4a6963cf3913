// What the sandbox activity takes and returns.

export interface SandboxLimits {
  image: string;
  memoryMb: number;
  cpus: number;
  pids: number;
  timeoutSeconds: number;
  /** Bytes of stdout and of stderr kept; the rest is counted and dropped. */
  outputBytes: number;
  artifactFiles: number;
  artifactFileBytes: number;
  artifactTotalBytes: number;
}

export interface SandboxInput {
  researchId: string;
  stepId: string;
  attempt: number;
  code: string;
  /** Data files for the code, written to /work (e.g. CSV from earlier steps). */
  files?: { name: string; content: string }[];
  /** Sources of the run, by id, written to /work/<id>.md: a crawled page's whole Markdown, else
   *  the source's stored text. Read here, so that pages never travel in the workflow history. */
  sources?: string[];
}

export interface ArtifactRef {
  artifactId: string;
  name: string;
  contentType: string;
  bytes: number;
}

export interface SandboxResult {
  status: 'ok' | 'error' | 'timeout' | 'oom' | 'crashed';
  exitCode: number | null;
  /** Short, for the workflow history; the full capped output is stored with the run. */
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
  artifacts: ArtifactRef[];
  rejected: { name: string; reason: string }[];
  /** What went wrong, in words the model and a reader understand. */
  message: string;
}
