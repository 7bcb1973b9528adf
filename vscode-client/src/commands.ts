/**
 * The extension's commands, each a thin wrapper over one of the server's
 * `workspace/executeCommand` commands (docs/CONTRACTS.md, "Commands").
 *
 * The server's own command ids (`fixlore.explain`, `fixlore.patterns`, …) are
 * registered in VS Code by the language client itself, so the extension's
 * commands use distinct ids and call the server with `ExecuteCommandRequest`.
 */

import * as vscode from "vscode";
import { ExecuteCommandRequest, ResponseError } from "vscode-languageclient/node";

import { SERVED_LANGUAGES } from "./config";
import type { FixloreSession } from "./extension";
import { explanationMarkdown, type PatternEntry, patternEntries } from "./present";

export function registerCommands(session: FixloreSession): vscode.Disposable[] {
  const guarded = (id: string, run: () => Promise<void>): vscode.Disposable =>
    vscode.commands.registerCommand(id, async () => {
      try {
        await run();
      } catch (error) {
        const message =
          error instanceof ResponseError || error instanceof Error ? error.message : String(error);
        void vscode.window.showErrorMessage(`fixlore: ${message}`);
      }
    });
  return [
    guarded("fixlore.restartServer", () => session.restart()),
    guarded("fixlore.showPatterns", () => showPatterns(session)),
    guarded("fixlore.explainRanking", () => explainRanking(session)),
    guarded("fixlore.forgetPattern", () => forgetPattern(session)),
    guarded("fixlore.exportKnowledge", () => exportKnowledge(session)),
    guarded("fixlore.importKnowledge", () => importKnowledge(session)),
    guarded("fixlore.toggleLearning", () => toggleLearning(session)),
    guarded("fixlore.showDashboard", () => showDashboard(session)),
  ];
}

let dashboardPanel: vscode.WebviewPanel | undefined;

/**
 * What fixlore learned, as the server's self-contained dashboard page in a webview
 * (`fixlore.dashboard`). The page carries its own Content Security Policy: inline
 * scripts and styles only with its nonce, no network. Running the command again
 * rebuilds the page from the store.
 */
async function showDashboard(session: FixloreSession): Promise<void> {
  const panel =
    dashboardPanel ??
    vscode.window.createWebviewPanel("fixlore.dashboard", "fixlore: Dashboard", vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [],
    });
  if (dashboardPanel === undefined) {
    dashboardPanel = panel;
    panel.onDidDispose(() => {
      dashboardPanel = undefined;
    });
  }
  const result = (await serverCommand(session, "fixlore.dashboard", [{ cspSource: panel.webview.cspSource }])) as {
    html?: unknown;
  } | null;
  if (typeof result?.html !== "string") {
    throw new Error("the server sent no dashboard.");
  }
  panel.webview.html = result.html;
  panel.reveal();
}

/** Run one of the server's commands; fails with a message a person can act on. */
async function serverCommand(session: FixloreSession, command: string, args: unknown[]): Promise<unknown> {
  const client = session.client;
  if (client === undefined || !client.isRunning()) {
    throw new Error("the fixlore server is not running (run “fixlore: Restart Server”).");
  }
  return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
}

async function currentLanguage(): Promise<string | undefined> {
  const language = vscode.window.activeTextEditor?.document.languageId;
  if (language !== undefined && SERVED_LANGUAGES.includes(language)) {
    return language;
  }
  return vscode.window.showQuickPick([...SERVED_LANGUAGES], { placeHolder: "Patterns of which language?" });
}

async function pickPattern(session: FixloreSession, placeHolder: string): Promise<PatternEntry | undefined> {
  const language = await currentLanguage();
  if (language === undefined) {
    return undefined;
  }
  const entries = patternEntries(await serverCommand(session, "fixlore.patterns", [language]));
  if (entries.length === 0) {
    void vscode.window.showInformationMessage(`fixlore knows no patterns for ${language} yet.`);
    return undefined;
  }
  return vscode.window.showQuickPick(entries, { placeHolder, matchOnDescription: true, matchOnDetail: true });
}

async function showPatterns(session: FixloreSession): Promise<void> {
  const picked = await pickPattern(session, "Learned patterns, best first");
  if (picked === undefined) {
    return;
  }
  const choice = await vscode.window.showInformationMessage(
    `${picked.label} (${picked.description}): ${picked.detail}`,
    "Forget This Pattern",
  );
  if (choice === "Forget This Pattern") {
    await forget(session, picked);
  }
}

async function forgetPattern(session: FixloreSession): Promise<void> {
  const picked = await pickPattern(session, "Forget which pattern?");
  if (picked !== undefined) {
    await forget(session, picked);
  }
}

async function forget(session: FixloreSession, entry: PatternEntry): Promise<void> {
  const confirm = await vscode.window.showWarningMessage(
    `Forget the pattern “${entry.label}”?`,
    { modal: true },
    "Forget",
  );
  if (confirm !== "Forget") {
    return;
  }
  const result = await serverCommand(session, "fixlore.forget", [entry.id]);
  const forgotten = typeof result === "object" && result !== null && (result as { forgotten?: unknown }).forgotten;
  void vscode.window.showInformationMessage(
    forgotten === true ? "fixlore forgot the pattern." : "fixlore did not know that pattern (any more).",
  );
}

async function explainRanking(session: FixloreSession): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const client = session.client;
  if (editor === undefined || client === undefined) {
    throw new Error("open a file and put the cursor on a diagnostic first.");
  }
  const position = editor.selection.active;
  const result = await serverCommand(session, "fixlore.explain", [
    client.code2ProtocolConverter.asUri(editor.document.uri),
    { line: position.line, character: position.character },
  ]);
  const document = await vscode.workspace.openTextDocument({
    language: "markdown",
    content: explanationMarkdown(result),
  });
  await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}

async function exportKnowledge(session: FixloreSession): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({
    title: "Export fixlore knowledge",
    defaultUri: folder ? vscode.Uri.joinPath(folder, "fixlore-knowledge.json") : undefined,
    filters: { "fixlore knowledge": ["json"] },
  });
  if (target === undefined) {
    return;
  }
  const result = (await serverCommand(session, "fixlore.export", [target.fsPath])) as {
    path?: string;
    count?: number;
  } | null;
  void vscode.window.showInformationMessage(
    `fixlore exported ${result?.count ?? "?"} patterns to ${result?.path ?? target.fsPath}.`,
  );
}

async function importKnowledge(session: FixloreSession): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    title: "Import fixlore knowledge",
    canSelectMany: false,
    filters: { "fixlore knowledge": ["json"] },
  });
  if (picked === undefined || picked.length === 0) {
    return;
  }
  const result = (await serverCommand(session, "fixlore.import", [picked[0].fsPath])) as {
    imported?: number;
    merged?: number;
  } | null;
  void vscode.window.showInformationMessage(
    `fixlore imported ${result?.imported ?? "?"} new patterns and merged ${result?.merged ?? "?"}.`,
  );
}

/** Flip learning now (server command) and persist it where the setting lives. */
async function toggleLearning(session: FixloreSession): Promise<void> {
  const settings = vscode.workspace.getConfiguration("fixlore");
  const current = session.status?.learning ?? settings.get<boolean>("learning", true);
  const wanted = !current;
  await serverCommand(session, "fixlore.setLearning", [wanted]);
  const inspected = settings.inspect<boolean>("learning");
  const target =
    inspected?.workspaceFolderValue !== undefined
      ? vscode.ConfigurationTarget.WorkspaceFolder
      : inspected?.workspaceValue !== undefined
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
  await settings.update("learning", wanted, target);
}
