/** Unit tests of the settings → fixlore configuration mapping (src/config.ts). */

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  changeNeedsRestart,
  configurationFor,
  DEFAULT_CONFIG,
  documentSelector,
  readerOf,
  SERVER_SETTING_KEYS,
  splitCommandLine,
  toServerConfig,
} from "../../config";

describe("toServerConfig", () => {
  it("sends nothing when nothing is set, so the server's defaults and pyproject.toml apply", () => {
    const { config, problems } = toServerConfig(readerOf({}));
    assert.deepEqual(config, {});
    assert.deepEqual(problems, []);
  });

  it("sends only the settings the user set", () => {
    const { config } = toServerConfig(readerOf({ learning: false, logLevel: "debug", manualFixPauseMs: null }));
    assert.deepEqual(config, { learning: false, logLevel: "debug" });
  });

  it("passes every valid setting through under its wire name", () => {
    const { config, problems } = toServerConfig(
      readerOf({
        upstreams: { python: [{ command: ["ruff", "server"], name: "ruff", settings: { lineLength: 100 } }] },
        learning: false,
        workspaceKnowledge: true,
        baseKnowledge: false,
        logLevel: "debug",
        diagnosticsDebounceMs: 0,
        manualFixPauseMs: 500,
        upstreamTimeoutMs: 1000,
        teamKnowledge: " host=db.internal dbname=fixlore user=alice ",
        teamMinWorkspaces: 5,
        teamMinApprovals: 1,
        path: "/opt/fixlore/bin/fixlore",
      }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(config, {
      upstreams: { python: [{ command: ["ruff", "server"], name: "ruff", settings: { lineLength: 100 } }] },
      learning: false,
      workspaceKnowledge: true,
      baseKnowledge: false,
      logLevel: "debug",
      diagnosticsDebounceMs: 0,
      manualFixPauseMs: 500,
      upstreamTimeoutMs: 1000,
      teamKnowledge: "host=db.internal dbname=fixlore user=alice",
      teamMinWorkspaces: 5,
      teamMinApprovals: 1,
    });
  });

  it("refuses a team store setting with a password, and never repeats the password", () => {
    for (const bad of ["host=db password=hunter2", "postgresql://me:hunter2@db/x", "postgresql://db/x?password=hunter2"]) {
      const { config, problems } = toServerConfig(readerOf({ teamKnowledge: bad }));
      assert.deepEqual(config, {});
      assert.equal(problems.length, 1);
      assert.match(problems[0], /teamKnowledge holds a password/);
      assert.doesNotMatch(problems[0], /hunter2/);
    }
    assert.deepEqual(toServerConfig(readerOf({ teamKnowledge: "fixlore-team" })).config, { teamKnowledge: "fixlore-team" });
    assert.match(toServerConfig(readerOf({ teamKnowledge: 5 })).problems[0], /teamKnowledge must be/);
  });

  it("takes the team's trust thresholds as whole numbers from 1 to 1000", () => {
    for (const bad of [0, 2.5, "3", 1001, true]) {
      const { config, problems } = toServerConfig(readerOf({ teamMinWorkspaces: bad, teamMinApprovals: bad }));
      assert.deepEqual(config, {});
      assert.equal(problems.length, 2);
    }
  });

  it("never sends the launch settings (path, interpreter) to the server", () => {
    const { config } = toServerConfig(readerOf({ path: "/x/fixlore", interpreter: "/x/python" }));
    assert.deepEqual(config, {});
    const all = toServerConfig(readerOf({ ...DEFAULT_CONFIG, path: "/x/fixlore", interpreter: "/x/python" })).config;
    assert.deepEqual(Object.keys(all).sort(), [...SERVER_SETTING_KEYS].sort());
  });

  it("keeps initializationOptions of an upstream untouched, falsy values included", () => {
    const options = { settings: { args: [] }, fixAll: false, nested: { n: 0 } };
    const { config } = toServerConfig(readerOf({ upstreams: { go: [{ command: ["gopls"], initializationOptions: options }] } }));
    assert.deepEqual(config.upstreams?.go[0].initializationOptions, options);
  });

  it("accepts a bare command list as shorthand for {command}", () => {
    const { config, problems } = toServerConfig(readerOf({ upstreams: { python: [["ruff", "server"]] } }));
    assert.deepEqual(config.upstreams, { python: [{ command: ["ruff", "server"] }] });
    assert.deepEqual(problems, []);
  });

  it("splits a command line as the server's shlex does", () => {
    const { config, problems } = toServerConfig(
      readerOf({ upstreams: { python: ["ruff server --preview", { command: "'/opt/my tools/pyright' --stdio", name: "p" }] } }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(config.upstreams?.python, [
      { command: ["ruff", "server", "--preview"] },
      { command: ["/opt/my tools/pyright", "--stdio"], name: "p" },
    ]);
    assert.deepEqual(splitCommandLine('a "b \\"c\\"" d\\ e'), ["a", 'b "c"', "d e"]);
    assert.equal(splitCommandLine("unterminated 'quote"), undefined);
  });

  it("drops an upstream without a usable command, names it, and keeps the others", () => {
    const { config, problems } = toServerConfig(
      readerOf({
        upstreams: {
          python: [{ command: "'unterminated" }, { command: ["ruff", "server"] }],
          rust: [{ command: [] }],
          go: [{ name: "gopls" }],
        },
      }),
    );
    assert.deepEqual(config.upstreams, { python: [{ command: ["ruff", "server"] }] });
    assert.equal(problems.length, 3);
    assert.match(problems[0], /upstreams\.python\[0\]/);
    assert.match(problems[1], /upstreams\.rust\[0\]/);
    assert.match(problems[2], /upstreams\.go\[0\]/);
  });

  it("leaves out each invalid value and says so", () => {
    const { config, problems } = toServerConfig(
      readerOf({
        upstreams: "ruff server",
        learning: "yes",
        logLevel: "verbose",
        diagnosticsDebounceMs: -5,
        upstreamTimeoutMs: 600_001,
        manualFixPauseMs: 1.5,
      }),
    );
    assert.deepEqual(config, {});
    assert.equal(problems.length, 6);
    assert.ok(problems.some((p) => p.includes("fixlore.learning")));
    assert.ok(problems.some((p) => p.includes("fixlore.logLevel")));
    assert.ok(problems.some((p) => p.includes("fixlore.upstreams")));
  });

  it("normalises log-level spellings", () => {
    assert.equal(toServerConfig(readerOf({ logLevel: "WARN" })).config.logLevel, "warning");
    assert.equal(toServerConfig(readerOf({ logLevel: "Error" })).config.logLevel, "error");
  });
});

describe("configurationFor", () => {
  const config = toServerConfig(readerOf({ learning: false })).config;

  it("answers section fixlore with the mapped settings", () => {
    assert.deepEqual(configurationFor("fixlore", config), { learning: false });
  });

  it("answers fixlore.<key> with one value, and null for an unset or unknown key", () => {
    assert.equal(configurationFor("fixlore.learning", config), false);
    assert.equal(configurationFor("fixlore.logLevel", config), null);
    assert.equal(configurationFor("fixlore.nonsense", config), null);
  });

  it("leaves other sections to the default handler", () => {
    assert.equal(configurationFor("python.analysis", config), undefined);
    assert.equal(configurationFor(undefined, config), undefined);
  });
});

describe("changeNeedsRestart", () => {
  const only = (changed: string) => (key: string) => key === changed;

  it("restarts when the launch command or the upstreams change", () => {
    assert.equal(changeNeedsRestart(only("fixlore.path"), {}), true);
    assert.equal(changeNeedsRestart(only("fixlore.interpreter"), {}), true);
    assert.equal(changeNeedsRestart(only("fixlore.upstreams"), {}), true);
  });

  it("notifies a change of a setting that was not sent at start", () => {
    assert.equal(changeNeedsRestart(only("fixlore.learning"), {}), false);
    assert.equal(changeNeedsRestart(only("fixlore.learning"), { logLevel: "debug" }), false);
  });

  it("restarts for a setting sent at start, which the server ranks above a notification", () => {
    assert.equal(changeNeedsRestart(only("fixlore.learning"), { learning: true }), true);
  });
});

describe("documentSelector", () => {
  it("hands fixlore files, untitled editors and notebook cells of every served language", () => {
    const selector = documentSelector();
    for (const scheme of ["file", "untitled", "vscode-notebook-cell"]) {
      assert.ok(selector.some((s) => s.scheme === scheme && s.language === "python"), scheme);
    }
    assert.equal(selector.length, 3 * 10);
  });
});
