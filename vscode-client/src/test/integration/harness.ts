/**
 * A minimal LSP client for driving the real `fixlore serve` from Node.
 *
 * Built on `vscode-languageserver-protocol` (the library VS Code's own
 * language client sits on), it spawns the server over stdio, answers the
 * server-to-client requests an editor answers (configuration, capability
 * registration, progress, applyEdit), and records notifications so tests can
 * wait for a condition instead of sleeping.
 */

import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  type ClientCapabilities,
  createProtocolConnection,
  type InitializeResult,
  type ProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type TextEdit,
  type WorkspaceEdit,
} from "vscode-languageserver-protocol/node";

import { splitCommandLine } from "../../config";
import { findServer, isServerCommand, searchPath } from "../../discovery";

export const WAIT_MS = 20_000;

/** The server command prefix: `FIXLORE_CMD` (e.g. `/venv/bin/python -m fixlore.lsp`), or `fixlore` on PATH. */
export function fixloreCommand(): string[] {
  const fromEnv = process.env.FIXLORE_CMD?.trim();
  if (fromEnv) {
    const words = splitCommandLine(fromEnv);
    if (words === undefined || words.length === 0) {
      throw new Error(`FIXLORE_CMD is not a command line: ${fromEnv}`);
    }
    return words;
  }
  const found = findServer({ envPath: process.env.PATH ?? "", envPathExt: process.env.PATHEXT });
  if (!isServerCommand(found)) {
    throw new Error(`${found.error} (for this test: set FIXLORE_CMD)`);
  }
  return [found.command];
}

/** `RUFF_CMD`, else `ruff` next to the fixlore executable, else `ruff` on PATH. */
export function ruffCommand(fixlore: string[]): string[] {
  const fromEnv = process.env.RUFF_CMD?.trim();
  if (fromEnv) {
    return splitCommandLine(fromEnv) ?? [fromEnv];
  }
  const dirs = [path.dirname(fixlore[0]), process.env.PATH ?? ""].join(path.delimiter);
  const ruff = searchPath("ruff", dirs, process.env.PATHEXT, process.platform, (file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  });
  if (ruff === undefined) {
    throw new Error("ruff was not found next to fixlore or on PATH (set RUFF_CMD)");
  }
  return [ruff, "server"];
}

/** Client capabilities close to what VS Code 1.9x sends. */
export const VSCODE_CAPABILITIES: ClientCapabilities = {
  general: { positionEncodings: ["utf-16"] },
  window: { workDoneProgress: true, showMessage: {} },
  workspace: {
    applyEdit: true,
    configuration: true,
    workspaceFolders: true,
    didChangeConfiguration: { dynamicRegistration: true },
    executeCommand: { dynamicRegistration: true },
    workspaceEdit: { documentChanges: true, resourceOperations: ["create", "rename", "delete"] },
  },
  textDocument: {
    synchronization: { dynamicRegistration: true, didSave: true, willSave: true },
    publishDiagnostics: {
      relatedInformation: true,
      versionSupport: false,
      codeDescriptionSupport: true,
      dataSupport: true,
      tagSupport: { valueSet: [1, 2] },
    },
    codeAction: {
      dynamicRegistration: true,
      isPreferredSupport: true,
      disabledSupport: true,
      dataSupport: true,
      honorsChangeAnnotations: true,
      resolveSupport: { properties: ["edit"] },
      codeActionLiteralSupport: {
        codeActionKind: {
          valueSet: ["", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source", "source.organizeImports"],
        },
      },
    },
  },
};

export interface Notification {
  method: string;
  params: unknown;
}

/** One running `fixlore serve` and the connection to it. */
export class ServerUnderTest {
  readonly notifications: Notification[] = [];
  readonly appliedEdits: WorkspaceEdit[] = [];
  readonly configurationRequests: unknown[] = [];
  private readonly waiters = new Set<() => void>();
  private stderr = "";
  private closed = false;
  private exited: Promise<number | null>;

  private constructor(
    readonly process: ChildProcess,
    readonly connection: ProtocolConnection,
    private readonly configuration: Record<string, unknown>,
  ) {
    this.exited = new Promise((resolve) => process.once("exit", (code) => resolve(code)));
  }

  /** Spawn `<fixlore...> serve --stdio` in `cwd` with its knowledge under `home`. */
  static start(options: {
    cwd: string;
    home: string;
    configuration: Record<string, unknown>;
    extraArgs?: string[];
  }): ServerUnderTest {
    const [command, ...prefix] = fixloreCommand();
    const child = spawn(command, [...prefix, "serve", "--stdio", ...(options.extraArgs ?? [])], {
      cwd: options.cwd,
      env: { ...process.env, FIXLORE_HOME: options.home },
      stdio: ["pipe", "pipe", "pipe"],
    });
    if (child.stdout === null || child.stdin === null || child.stderr === null) {
      throw new Error("could not open the server's stdio");
    }
    const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const server = new ServerUnderTest(child, connection, options.configuration);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      server.stderr = (server.stderr + chunk).slice(-8000);
    });
    child.on("error", (error) => {
      server.stderr += `\nspawn failed: ${error.message}`;
    });
    server.listen();
    connection.listen();
    return server;
  }

  private listen(): void {
    const c = this.connection;
    // Every notification: none has a handler of its own, so all arrive here.
    c.onUnhandledNotification((message) => {
      this.notifications.push({ method: message.method, params: message.params });
      for (const wake of [...this.waiters]) {
        wake();
      }
    });
    c.onRequest("workspace/configuration", (params: { items: { section?: string }[] }) => {
      this.configurationRequests.push(params);
      return params.items.map((item) =>
        item.section !== undefined && item.section in this.configuration ? this.configuration[item.section] : null,
      );
    });
    c.onRequest("client/registerCapability", () => null);
    c.onRequest("client/unregisterCapability", () => null);
    c.onRequest("window/workDoneProgress/create", () => null);
    c.onRequest("window/showMessageRequest", () => null);
    c.onRequest("workspace/applyEdit", (params: { edit: WorkspaceEdit }) => {
      this.appliedEdits.push(params.edit);
      return { applied: true };
    });
  }

  /** Change what the client answers to workspace/configuration for a section. */
  setConfiguration(section: string, value: unknown): void {
    this.configuration[section] = value;
  }

  /** The server's recent stderr, for failure messages. */
  log(): string {
    return this.stderr;
  }

  async initialize(rootPath: string, initializationOptions: unknown): Promise<InitializeResult> {
    const rootUri = fileUri(rootPath);
    const result = await this.within<InitializeResult>(
      this.connection.sendRequest("initialize", {
        processId: process.pid,
        clientInfo: { name: "Visual Studio Code", version: "1.91.0" },
        rootUri,
        workspaceFolders: [{ uri: rootUri, name: path.basename(rootPath) }],
        capabilities: VSCODE_CAPABILITIES,
        initializationOptions,
        trace: "off",
      }),
      "initialize",
    );
    await this.connection.sendNotification("initialized", {});
    return result;
  }

  /** Send a request and fail with the server's log if it takes longer than `WAIT_MS`. */
  request<T>(method: string, params: unknown): Promise<T> {
    return this.within(this.connection.sendRequest(method, params) as Promise<T>, method);
  }

  executeCommand<T>(command: string, args: unknown[]): Promise<T> {
    return this.request<T>("workspace/executeCommand", { command, arguments: args });
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.connection.sendNotification(method, params);
  }

  /** Resolve with the first notification (past or future) of `method` that satisfies `test`. */
  waitFor<T>(method: string, test: (params: T) => boolean, what: string, since = 0): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = (): boolean => {
        const hit = this.notifications.slice(since).find((n) => n.method === method && test(n.params as T));
        if (hit !== undefined) {
          done();
          resolve(hit.params as T);
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${WAIT_MS} ms waiting for ${what}\n--- server log ---\n${this.stderr}`));
      }, WAIT_MS);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
      };
      const wake = (): void => {
        check();
      };
      this.waiters.add(wake);
      check();
    });
  }

  /** Re-evaluate `probe` (a request) until it yields a value that satisfies `test`. */
  async until<T>(probe: () => Promise<T>, test: (value: T) => boolean, what: string): Promise<T> {
    const deadline = Date.now() + WAIT_MS;
    let last: T | undefined;
    while (Date.now() < deadline) {
      last = await probe();
      if (test(last)) {
        return last;
      }
      // Each probe is a round trip through the server's queue; pace them so as not to flood it.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}\n--- server log ---\n${this.stderr}`);
  }

  /** Shut down politely; returns the exit code. */
  async shutdown(): Promise<number | null> {
    if (this.closed) {
      return this.exited;
    }
    this.closed = true;
    if (this.process.exitCode === null) {
      try {
        await this.request("shutdown", null);
        await this.connection.sendNotification("exit");
      } catch {
        this.process.kill();
      }
    }
    // A clean exit (store flushed, upstream stopped, workers ended) takes well under a second; 15 s
    // leaves room for two loaded cores. (Node's stdio is a socket pair: a server reading it on a
    // thread stayed alive after `exit` until this timer killed it.)
    const timer = setTimeout(() => this.process.kill("SIGKILL"), 15000);
    const code = await this.exited;
    clearTimeout(timer);
    this.connection.dispose();
    return code;
  }

  private within<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer to ${what} within ${WAIT_MS} ms\n--- server log ---\n${this.stderr}`)),
        WAIT_MS,
      );
    });
    const died = this.exited.then((code) => {
      throw new Error(`the server exited (code ${code}) before answering ${what}\n--- server log ---\n${this.stderr}`);
    });
    return Promise.race([promise, timeout, died]).finally(() => clearTimeout(timer));
  }
}

export function fileUri(file: string): string {
  return "file://" + path.resolve(file).split(path.sep).map(encodeURIComponent).join("/");
}

/** Apply LSP text edits (UTF-16 positions, as JS strings use) to a text. */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\n") {
      starts.push(i + 1);
    }
  }
  const offset = (p: { line: number; character: number }): number =>
    p.line >= starts.length ? text.length : Math.min(starts[p.line] + p.character, text.length);
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  let out = text;
  for (const edit of sorted) {
    out = out.slice(0, offset(edit.range.start)) + edit.newText + out.slice(offset(edit.range.end));
  }
  return out;
}

/** The text edits a workspace edit makes to one document. */
export function editsFor(edit: WorkspaceEdit | undefined, uri: string): TextEdit[] {
  if (edit === undefined) {
    return [];
  }
  const out: TextEdit[] = [...(edit.changes?.[uri] ?? [])];
  for (const change of edit.documentChanges ?? []) {
    if ("textDocument" in change && change.textDocument.uri === uri) {
      out.push(...change.edits.filter((e): e is TextEdit => "range" in e));
    }
  }
  return out;
}
