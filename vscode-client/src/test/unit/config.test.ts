/** Unit tests of the settings → fixlore configuration mapping (src/config.ts). */

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  changeNeedsRestart,
  configurationFor,
  DEFAULT_CONFIG,
  readerOf,
  SERVER_SETTING_KEYS,
  splitCommandLine,
  toServerConfig,
} from "../../config";

describe("toServerConfig", () => {
  it("gives the documented defaults when nothing is set", () => {
    const { config, problems } = toServerConfig(readerOf({}));
    assert.deepEqual(config, {
      upstreams: {},
      learning: true,
      workspaceKnowledge: false,
      baseKnowledge: true,
      logLevel: "info",
      diagnosticsDebounceMs: 250,
      manualFixPauseMs: 2000,
      upstreamTimeoutMs: 3000,
    });
    assert.deepEqual(problems, []);
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
    });
  });

  it("never sends the launch settings (path, interpreter) to the server", () => {
    const { config } = toServerConfig(readerOf({ path: "/x/fixlore", interpreter: "/x/python" }));
    assert.deepEqual(Object.keys(config).sort(), [...SERVER_SETTING_KEYS].sort());
    assert.ok(!("path" in config) && !("interpreter" in config));
  });

  it("keeps initializationOptions of an upstream untouched, falsy values included", () => {
    const options = { settings: { args: [] }, fixAll: false, nested: { n: 0 } };
    const { config } = toServerConfig(readerOf({ upstreams: { go: [{ command: ["gopls"], initializationOptions: options }] } }));
    assert.deepEqual(config.upstreams.go[0].initializationOptions, options);
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
    assert.deepEqual(config.upstreams.python, [
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

  it("falls back to the default for each invalid value and says so", () => {
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
    assert.deepEqual(config, { ...DEFAULT_CONFIG });
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

  it("answers section fixlore with the mapped configuration", () => {
    assert.deepEqual(configurationFor("fixlore", config), config);
  });

  it("answers fixlore.<key> with one value and an unknown key with null", () => {
    assert.equal(configurationFor("fixlore.learning", config), false);
    assert.equal(configurationFor("fixlore.nonsense", config), null);
  });

  it("leaves other sections to the default handler", () => {
    assert.equal(configurationFor("python.analysis", config), undefined);
    assert.equal(configurationFor(undefined, config), undefined);
  });
});

describe("changeNeedsRestart", () => {
  it("restarts only when the launch settings change", () => {
    assert.equal(changeNeedsRestart((key) => key === "fixlore.path"), true);
    assert.equal(changeNeedsRestart((key) => key === "fixlore.interpreter"), true);
    assert.equal(changeNeedsRestart((key) => key === "fixlore.learning"), false);
  });
});
