/**
 * Integration test: the real `fixlore serve`, driven from Node over stdio the
 * way VS Code drives it (same protocol library, VS Code's capabilities, the
 * extension's own settings mapping for `initializationOptions`).
 *
 * Server command: `FIXLORE_CMD` (default `fixlore` on PATH); the upstream part
 * uses a real `ruff server` (`RUFF_CMD`, default `ruff` next to fixlore).
 * Nothing here is skipped: a part of the server that is missing fails.
 */

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import type {
  CodeAction,
  Command,
  Diagnostic,
  InitializeResult,
  PublishDiagnosticsParams,
} from "vscode-languageserver-protocol/node";

import { readerOf, toServerConfig } from "../../config";
import { applyTextEdits, editsFor, fileUri, fixloreCommand, ruffCommand, ServerUnderTest } from "./harness";

const SERVER_COMMANDS = [
  "fixlore.accept",
  "fixlore.explain",
  "fixlore.patterns",
  "fixlore.forget",
  "fixlore.export",
  "fixlore.import",
  "fixlore.stats",
  "fixlore.setLearning",
];

/** A module name no allowlist holds: it must never reach fixlore's files. */
const SECRET = "acme_payroll_secrets";

interface Status {
  learning: boolean;
  patterns: number;
}

interface PatternRow {
  id: string | number;
  signature: unknown;
  category?: string;
}

function workspace(files: Record<string, string>): { root: string; home: string } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "fixlore-it-"));
  const root = path.join(base, "ws");
  const home = path.join(base, "home");
  fs.mkdirSync(root);
  fs.mkdirSync(home);
  for (const [name, text] of Object.entries(files)) {
    fs.writeFileSync(path.join(root, name), text);
  }
  return { root, home };
}

function isStatus(value: unknown): value is Status {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Status).learning === "boolean" &&
    typeof (value as Status).patterns === "number"
  );
}

describe("fixlore serve, standalone", { timeout: 90_000 }, () => {
  const { root, home } = workspace({ "broken.py": "def f(:\n    pass\n" });
  const config = toServerConfig(readerOf({})).config;
  let server: ServerUnderTest;
  let init: InitializeResult;

  before(async () => {
    server = ServerUnderTest.start({ cwd: root, home, configuration: { fixlore: config } });
    init = await server.initialize(root, { fixlore: config });
  });

  after(async () => {
    await server?.shutdown();
    fs.rmSync(path.dirname(root), { recursive: true, force: true });
  });

  it("is found the way the extension finds it", () => {
    assert.ok(fixloreCommand().length > 0);
  });

  it("answers initialize with code actions, document sync and all of fixlore's commands", () => {
    const caps = init.capabilities;
    assert.ok(caps.textDocumentSync !== undefined, "no textDocumentSync");
    assert.ok(caps.codeActionProvider, "no codeActionProvider");
    const commands = caps.executeCommandProvider?.commands ?? [];
    for (const command of SERVER_COMMANDS) {
      assert.ok(commands.includes(command), `executeCommandProvider.commands lacks ${command}: ${JSON.stringify(commands)}`);
    }
  });

  it("sends fixlore/status after initialize, with learning on", async () => {
    const status = await server.waitFor<unknown>("fixlore/status", isStatus, "fixlore/status");
    assert.ok(isStatus(status));
    assert.equal(status.learning, true);
    assert.ok(status.patterns >= 0);
  });

  it("publishes its own syntax diagnostics (source fixlore) for a broken Python file", async () => {
    const uri = fileUri(path.join(root, "broken.py"));
    await server.notify("textDocument/didOpen", {
      textDocument: { uri, languageId: "python", version: 1, text: fs.readFileSync(path.join(root, "broken.py"), "utf8") },
    });
    const published = await server.waitFor<PublishDiagnosticsParams>(
      "textDocument/publishDiagnostics",
      (p) => p.uri === uri && p.diagnostics.some((d) => d.source === "fixlore"),
      "fixlore's syntax diagnostics for broken.py",
    );
    const diagnostic = published.diagnostics.find((d) => d.source === "fixlore");
    assert.ok(diagnostic !== undefined);
    assert.equal(diagnostic.range.start.line, 0, "the syntax error is on the first line");
    assert.ok(String(diagnostic.message).length > 0);
  });
  it("applies a settings change pushed with workspace/didChangeConfiguration, as the extension sends it", async () => {
    const since = server.notifications.length;
    const changed = toServerConfig(readerOf({ learning: false })).config;
    server.setConfiguration("fixlore", changed);
    await server.notify("workspace/didChangeConfiguration", { settings: { fixlore: changed } });
    await server.waitFor<Status>("fixlore/status", (s) => isStatus(s) && !s.learning, "fixlore/status with learning off", since);
    const stats = await server.executeCommand<{ learning: boolean }>("fixlore.stats", []);
    assert.equal(stats.learning, false);
  });
});

describe("fixlore serve in front of ruff: the learning loop", { timeout: 180_000 }, () => {
  const text = `import ${SECRET}\nimport os\n\n\nprint(os.sep)\n`;
  const { root, home } = workspace({ "main.py": text });
  const uri = fileUri(path.join(root, "main.py"));
  let server: ServerUnderTest;
  let diagnostic: Diagnostic;
  let actions: CodeAction[];
  let accepted: CodeAction;
  let learnedId: string;
  let exported: string;

  before(async () => {
    const ruff = ruffCommand(fixloreCommand());
    // No base knowledge: whatever fixlore.patterns lists was learned in this test.
    const config = toServerConfig(
      readerOf({ upstreams: { python: [{ command: ruff, name: "ruff" }] }, baseKnowledge: false }),
    ).config;
    server = ServerUnderTest.start({ cwd: root, home, configuration: { fixlore: config } });
    await server.initialize(root, { fixlore: config });
    // Until fixlore has loaded, its early front answers code actions with ruff's alone
    // (no fixlore.accept): this suite is about the learning loop, which starts after.
    await server.waitFor<unknown>("fixlore/status", isStatus, "fixlore/status (the full server serves)");
    await server.notify("textDocument/didOpen", { textDocument: { uri, languageId: "python", version: 1, text } });
  });

  after(async () => {
    await server?.shutdown();
    fs.rmSync(path.dirname(root), { recursive: true, force: true });
  });

  it("relays ruff's diagnostics for the open file", async () => {
    const published = await server.waitFor<PublishDiagnosticsParams>(
      "textDocument/publishDiagnostics",
      (p) => p.uri === uri && p.diagnostics.some((d) => d.code === "F401"),
      "ruff's F401 through fixlore",
    );
    const unused = published.diagnostics.find((d) => d.code === "F401" && d.range.start.line === 0);
    assert.ok(unused !== undefined, `no F401 on line 0: ${JSON.stringify(published.diagnostics)}`);
    diagnostic = unused;
  });

  it("puts fixlore.accept on every code action it returns", async () => {
    assert.ok(diagnostic, "needs the diagnostic of the previous step");
    const result = await server.request<(CodeAction | Command)[] | null>("textDocument/codeAction", {
      textDocument: { uri },
      range: diagnostic.range,
      context: { diagnostics: [diagnostic], triggerKind: 1 },
    });
    assert.ok(Array.isArray(result) && result.length > 0, `no code actions: ${JSON.stringify(result)}`);
    actions = result.filter((a): a is CodeAction => "title" in a && typeof (a as Command).command !== "string");
    assert.equal(actions.length, result.length, "fixlore returns CodeActions, not bare Commands");
    for (const action of actions) {
      assert.equal(action.command?.command, "fixlore.accept", `action without fixlore.accept: ${JSON.stringify(action)}`);
    }
    const fix = actions.find((a) => a.kind === "quickfix" && /remove unused import/i.test(a.title));
    assert.ok(fix !== undefined, `ruff's fix is missing: ${JSON.stringify(actions.map((a) => a.title))}`);
    accepted = fix;
  });

  it("explains the ranking at the diagnostic (fixlore.explain)", async () => {
    const result = await server.executeCommand<{ diagnostics: { message: string; actions: { title: string; score: number; preferred: boolean; explanation: string[] }[] }[] }>(
      "fixlore.explain",
      [uri, diagnostic.range.start],
    );
    const here = result.diagnostics.find((d) => d.actions.some((a) => /remove unused import/i.test(a.title)));
    assert.ok(here !== undefined, `no explanation for the F401 fix: ${JSON.stringify(result)}`);
    for (const action of here.actions) {
      assert.equal(typeof action.score, "number");
      assert.equal(typeof action.preferred, "boolean");
      assert.ok(Array.isArray(action.explanation));
    }
  });

  it("learns the fix the user applies: edit first, then fixlore.accept (the round trip VS Code makes)", async () => {
    assert.ok(accepted, "needs the action of the previous step");
    let fix = accepted;
    if (fix.edit === undefined && fix.data !== undefined) {
      fix = await server.request<CodeAction>("codeAction/resolve", fix);
    }
    const edits = editsFor(fix.edit, uri);
    assert.ok(edits.length > 0, `the fix has no edit for main.py: ${JSON.stringify(fix)}`);
    const fixed = applyTextEdits(text, edits);
    assert.ok(!fixed.includes(SECRET), "the fix removes the unused import");
    // Count from here: the fixed diagnostics may arrive before the command returns.
    const before = server.notifications.length;
    await server.notify("textDocument/didChange", {
      textDocument: { uri, version: 2 },
      contentChanges: [{ text: fixed }],
    });
    const known = await server.executeCommand<PatternRow[]>("fixlore.patterns", ["python"]);
    assert.ok(!known.some((r) => JSON.stringify(r.signature).includes("F401")), "nothing learned yet");
    const command = fix.command;
    assert.ok(command !== undefined);
    await server.executeCommand(command.command, command.arguments ?? []);

    await server.waitFor<PublishDiagnosticsParams>(
      "textDocument/publishDiagnostics",
      (p) => p.uri === uri && !p.diagnostics.some((d) => d.code === "F401" && d.range.start.line === 0),
      "the F401 to go away after the fix",
      before,
    );
    // Learning is written in the background: wait until the store holds it.
    const stats = await server.until(
      () => server.executeCommand<{ patterns: number; events: number; learning: boolean }>("fixlore.stats", []),
      (s) => s.patterns >= 1 && s.events >= 1,
      "fixlore.stats to count the accepted fix",
    );
    assert.equal(stats.learning, true);
    const patterns = await server.executeCommand<PatternRow[]>("fixlore.patterns", ["python"]);
    const row = patterns.find((r) => JSON.stringify(r.signature).includes("F401"));
    assert.ok(row !== undefined, `fixlore.patterns does not list the accepted F401 fix: ${JSON.stringify(patterns)}`);
    learnedId = String(row.id);
    await server.waitFor<Status>("fixlore/status", (s) => isStatus(s) && s.patterns >= 1, "fixlore/status with the learned pattern");
  });

  it("exports, forgets and re-imports what it learned", async () => {
    assert.ok(learnedId, "needs the pattern of the previous step");
    exported = path.join(path.dirname(root), "export.json");
    const out = await server.executeCommand<{ path: string; count: number }>("fixlore.export", [exported]);
    assert.ok(out.count >= 1, `export: ${JSON.stringify(out)}`);
    const file = fs.readFileSync(exported, "utf8");
    assert.ok(file.includes("F401"), "the export holds the learned pattern");
    assert.ok(!file.includes(SECRET), "the export holds no identifier of the user's code");

    const forgot = await server.executeCommand<{ forgotten: boolean }>("fixlore.forget", [learnedId]);
    assert.equal(forgot.forgotten, true);
    const afterForget = await server.executeCommand<PatternRow[]>("fixlore.patterns", ["python"]);
    assert.ok(!afterForget.some((r) => String(r.id) === learnedId), "the forgotten pattern is no longer listed");

    const imported = await server.executeCommand<{ imported: number; merged: number }>("fixlore.import", [exported]);
    assert.ok(imported.imported + imported.merged >= 1, `import: ${JSON.stringify(imported)}`);
    const afterImport = await server.executeCommand<PatternRow[]>("fixlore.patterns", ["python"]);
    assert.ok(afterImport.some((r) => String(r.id) === learnedId), "the imported pattern is listed again");
  });

  it("turns learning off with fixlore.setLearning and reports it in fixlore/status", async () => {
    const since = server.notifications.length;
    const result = await server.executeCommand<{ learning: boolean }>("fixlore.setLearning", [false]);
    assert.equal(result.learning, false);
    await server.waitFor<Status>("fixlore/status", (s) => isStatus(s) && !s.learning, "fixlore/status with learning off", since);
    const stats = await server.executeCommand<{ learning: boolean }>("fixlore.stats", []);
    assert.equal(stats.learning, false);
  });

  it("after shutdown, its files hold what it learned and no identifier of the user's code", async () => {
    const code = await server.shutdown();
    assert.equal(code, 0, `exit code ${code}\n${server.log()}`);
    const files = walk(home);
    assert.ok(files.length > 0, "fixlore wrote nothing under FIXLORE_HOME");
    for (const file of files) {
      assert.ok(!fs.readFileSync(file).includes(SECRET), `${path.relative(home, file)} contains the user's module name`);
    }
  });
});

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}
