/**
 * The fixlore extension: starts `fixlore serve` and connects VS Code to it.
 *
 * Finds the server (src/discovery.ts), maps the `fixlore.*` settings onto
 * fixlore's configuration (src/config.ts) and sends them as
 * `initializationOptions.fixlore`, answers `workspace/configuration` for
 * section `fixlore`, and notifies `workspace/didChangeConfiguration` when they
 * change (restarting instead when the launch settings, the upstreams or a
 * setting sent at start change; see `changeNeedsRestart`). Only settings the
 * user set are sent, so fixlore's defaults and `pyproject.toml` still apply. Shows a
 * status-bar item fed by the `fixlore/status` notification, and registers the
 * commands of src/commands.ts.
 */

import * as os from "node:os";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  ResponseError,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";

import { registerCommands } from "./commands";
import {
  changeNeedsRestart,
  configurationFor,
  documentSelector,
  type ServerSettings,
  toServerConfig,
} from "./config";
import { findServer, isServerCommand } from "./discovery";
import {
  type Learned,
  learnedSince,
  learningCounts,
  parseStatus,
  type ServerState,
  type Status,
  statusView,
} from "./present";

const CLIENT_ID = "fixlore";

/** Owns the language client across restarts, and the status-bar item. */
export class FixloreSession implements vscode.Disposable {
  client: LanguageClient | undefined;
  status: Status | undefined;
  /** The learning counters when this session's server first reported, and what was learned since. */
  private learnedFrom: Learned | undefined;
  private learned: Learned | undefined;
  /** The settings sent as initializationOptions: the server ranks them above later pushes. */
  private sentAtStart: ServerSettings = {};
  private state: ServerState = "stopped";
  private failure: string | undefined;
  private readonly statusItem: vscode.StatusBarItem;
  private readonly output: vscode.LogOutputChannel;
  private readonly clientDisposables: vscode.Disposable[] = [];
  private warnedProblems = new Set<string>();

  constructor() {
    this.output = vscode.window.createOutputChannel("fixlore", { log: true });
    this.statusItem = vscode.window.createStatusBarItem("fixlore.status", vscode.StatusBarAlignment.Right, 100);
    this.statusItem.name = "fixlore";
    this.render();
    this.statusItem.show();
  }

  /** The `fixlore` settings the user set for a resource, mapped; problems are shown once each. */
  serverConfig(scope?: vscode.Uri): ServerSettings {
    const settings = vscode.workspace.getConfiguration("fixlore", scope);
    const { config, problems } = toServerConfig((key) => {
      const inspected = settings.inspect(key);
      return inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
    });
    for (const problem of problems) {
      if (!this.warnedProblems.has(problem)) {
        this.warnedProblems.add(problem);
        this.output.warn(problem);
        void vscode.window.showWarningMessage(problem);
      }
    }
    return config;
  }

  async start(): Promise<void> {
    const settings = vscode.workspace.getConfiguration("fixlore");
    const found = findServer({
      path: settings.get<string>("path"),
      interpreter: settings.get<string>("interpreter"),
      workspaceFolders: (vscode.workspace.workspaceFolders ?? [])
        .filter((folder) => folder.uri.scheme === "file")
        .map((folder) => folder.uri.fsPath),
      envPath: process.env.PATH,
      envPathExt: process.env.PATHEXT,
      home: os.homedir(),
    });
    if (!isServerCommand(found)) {
      this.setState("failed", found.error);
      this.output.error(found.error);
      const choice = await vscode.window.showErrorMessage(found.error, "Open Settings");
      if (choice === "Open Settings") {
        await vscode.commands.executeCommand("workbench.action.openSettings", "fixlore.");
      }
      return;
    }
    this.output.info(`Starting ${found.command} ${found.args.join(" ")} (found via ${found.source})`);
    const serverOptions: ServerOptions = {
      command: found.command,
      args: found.args,
      options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: documentSelector(),
      outputChannel: this.output,
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answered = await next(params, token);
            if (answered instanceof ResponseError) {
              return answered;
            }
            return params.items.map((item, index) => {
              const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
              const ours = configurationFor(item.section, this.serverConfig(scope));
              return ours === undefined ? answered[index] : ours;
            });
          },
        },
      },
    };
    this.sentAtStart = this.serverConfig();
    clientOptions.initializationOptions = { fixlore: this.sentAtStart };
    const client = new LanguageClient(CLIENT_ID, "fixlore", serverOptions, clientOptions);
    this.client = client;
    this.clientDisposables.push(
      client.onDidChangeState((event) => {
        if (event.newState === State.Running) {
          this.setState("running");
        } else if (event.newState === State.Starting) {
          this.setState("starting");
        } else {
          this.setState("stopped");
        }
      }),
      client.onNotification("fixlore/status", (params: unknown) => {
        const status = parseStatus(params);
        if (status !== undefined) {
          this.status = status;
          this.render();
          void this.refreshLearned(client);
        }
      }),
    );
    this.setState("starting");
    try {
      await client.start();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.setState("failed", message);
      this.output.error(`fixlore did not start: ${message}`);
      void vscode.window.showErrorMessage(`fixlore did not start: ${message}`, "Show Log").then((choice) => {
        if (choice === "Show Log") {
          this.output.show();
        }
      });
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    while (this.clientDisposables.length > 0) {
      this.clientDisposables.pop()?.dispose();
    }
    if (client !== undefined) {
      try {
        await client.dispose(10000); // shutdown flushes the knowledge store: give it time before a kill
      } catch (error) {
        this.output.warn(`Stopping fixlore: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.status = undefined;
    this.setState("stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** React to a settings change: restart for the launch settings, notify otherwise. */
  async onConfigurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!event.affectsConfiguration("fixlore")) {
      return;
    }
    if (changeNeedsRestart((key) => event.affectsConfiguration(key), this.sentAtStart)) {
      this.output.info("Settings the server took at start changed: restarting it.");
      await this.restart();
      return;
    }
    const client = this.client;
    if (client?.isRunning()) {
      await client.sendNotification(DidChangeConfigurationNotification.type, {
        settings: { fixlore: this.serverConfig() },
      });
    }
  }

  /** Ask the server what it has learned (`fixlore.stats`) and show what changed in this session. */
  private async refreshLearned(client: LanguageClient): Promise<void> {
    let stats: unknown;
    try {
      stats = await client.sendRequest(ExecuteCommandRequest.type, { command: "fixlore.stats", arguments: [] });
    } catch {
      return; // an older server, or one going away: the pattern count alone is shown
    }
    const counts = learningCounts(stats);
    if (counts === undefined || client !== this.client) {
      return;
    }
    this.learnedFrom ??= counts;
    this.learned = learnedSince(this.learnedFrom, counts);
    this.render();
  }

  /** Make the status-bar item show the state, or the server's last status. */
  render(): void {
    const view = statusView(this.state, this.status, this.failure, this.learned);
    this.statusItem.text = view.text;
    const tooltip = new vscode.MarkdownString(view.tooltip);
    if (this.state === "running") {
      tooltip.appendMarkdown("\n\n[Explain the ranking at the cursor](command:fixlore.explainRanking)");
      tooltip.isTrusted = { enabledCommands: ["fixlore.explainRanking"] };
    }
    this.statusItem.tooltip = tooltip;
    this.statusItem.command =
      this.state === "running" ? "fixlore.toggleLearning" : "fixlore.restartServer";
  }

  private setState(state: ServerState, failure?: string): void {
    this.state = state;
    this.failure = failure;
    this.render();
  }

  dispose(): void {
    void this.stop();
    this.statusItem.dispose();
    this.output.dispose();
  }
}

let session: FixloreSession | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  session = new FixloreSession();
  context.subscriptions.push(
    session,
    vscode.workspace.onDidChangeConfiguration((event) => session?.onConfigurationChanged(event)),
    ...registerCommands(session),
  );
  await session.start();
}

export async function deactivate(): Promise<void> {
  await session?.stop();
  session = undefined;
}
