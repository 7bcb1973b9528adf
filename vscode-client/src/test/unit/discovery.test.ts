/** Unit tests of finding the server executable (src/discovery.ts), on a fake file system and on a real one. */

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";

import { type DiscoveryError, findServer, isServerCommand, type ServerCommand } from "../../discovery";

const files = (...present: string[]) => (file: string) => present.includes(file);

function ok(found: ServerCommand | DiscoveryError): ServerCommand {
  assert.ok(isServerCommand(found), `expected a command, got: ${JSON.stringify(found)}`);
  return found;
}

function fails(found: ServerCommand | DiscoveryError): DiscoveryError {
  assert.ok(!isServerCommand(found), `expected an error, got: ${JSON.stringify(found)}`);
  return found;
}

describe("findServer (POSIX)", () => {
  const base = { platform: "linux" as const, envPath: "/usr/local/bin:/usr/bin", workspaceFolders: ["/ws"] };
  const everything = files("/opt/fx/fixlore", "/usr/bin/python3", "/ws/.venv/bin/fixlore", "/usr/bin/fixlore");

  it("uses fixlore.path first", () => {
    const found = ok(findServer({ ...base, path: "/opt/fx/fixlore", interpreter: "/usr/bin/python3", isExecutable: everything }));
    assert.deepEqual(found, { command: "/opt/fx/fixlore", args: ["serve", "--stdio"], source: "setting:path" });
  });

  it("runs the interpreter with -m fixlore.lsp when only fixlore.interpreter is set", () => {
    const found = ok(findServer({ ...base, interpreter: "/usr/bin/python3", isExecutable: everything }));
    assert.deepEqual(found, {
      command: "/usr/bin/python3",
      args: ["-m", "fixlore.lsp", "serve", "--stdio"],
      source: "setting:interpreter",
    });
  });

  it("looks a bare interpreter name up on PATH", () => {
    const found = ok(findServer({ ...base, interpreter: "python3", isExecutable: everything }));
    assert.equal(found.command, "/usr/bin/python3");
  });

  it("resolves a relative setting against the first workspace folder, and expands ~ and ${workspaceFolder}", () => {
    assert.equal(ok(findServer({ ...base, path: "./.venv/bin/fixlore", isExecutable: everything })).command, "/ws/.venv/bin/fixlore");
    assert.equal(
      ok(findServer({ ...base, path: "${workspaceFolder}/.venv/bin/fixlore", isExecutable: everything })).command,
      "/ws/.venv/bin/fixlore",
    );
    assert.equal(
      ok(findServer({ ...base, home: "/home/u", path: "~/bin/fixlore", isExecutable: files("/home/u/bin/fixlore") })).command,
      "/home/u/bin/fixlore",
    );
  });

  it("prefers the workspace .venv over PATH", () => {
    const found = ok(findServer({ ...base, isExecutable: everything }));
    assert.deepEqual(found, { command: "/ws/.venv/bin/fixlore", args: ["serve", "--stdio"], source: "workspace-venv" });
  });

  it("checks every workspace folder's .venv", () => {
    const found = ok(findServer({ ...base, workspaceFolders: ["/a", "/b"], isExecutable: files("/b/.venv/bin/fixlore") }));
    assert.equal(found.command, "/b/.venv/bin/fixlore");
  });

  it("falls back to the first fixlore on PATH", () => {
    const found = ok(findServer({ ...base, isExecutable: files("/usr/bin/fixlore", "/usr/local/bin/fixlore") }));
    assert.deepEqual(found, { command: "/usr/local/bin/fixlore", args: ["serve", "--stdio"], source: "PATH" });
  });

  it("does not fall back when a configured path is wrong: it names the setting", () => {
    const error = fails(findServer({ ...base, path: "/nope/fixlore", isExecutable: everything }));
    assert.equal(error.fromSetting, true);
    assert.match(error.error, /fixlore\.path.*\/nope\/fixlore/);
    const bad = fails(findServer({ ...base, interpreter: "/nope/python", isExecutable: everything }));
    assert.match(bad.error, /fixlore\.interpreter/);
  });

  it("says what to set when nothing is found", () => {
    const error = fails(findServer({ ...base, isExecutable: files() }));
    assert.equal(error.fromSetting, false);
    assert.match(error.error, /fixlore\.path/);
    // fixlore is not on a package index: the message says how it really installs.
    assert.match(error.error, /not on PyPI/);
    assert.match(error.error, /pipx install \.\/fixlore/);
    assert.match(error.error, /fixlore\.interpreter/);
    assert.match(error.error, /PATH/);
  });

  it("treats a blank setting as unset", () => {
    assert.equal(ok(findServer({ ...base, path: "  ", interpreter: "", isExecutable: everything })).source, "workspace-venv");
  });
});

describe("findServer (Windows)", () => {
  it("finds .venv\\Scripts\\fixlore.exe and PATHEXT executables", () => {
    const venv = ok(findServer({ platform: "win32", workspaceFolders: ["C:\\ws"], envPath: "", isExecutable: files("C:\\ws\\.venv\\Scripts\\fixlore.exe") }));
    assert.equal(venv.command, "C:\\ws\\.venv\\Scripts\\fixlore.exe");
    const onPath = ok(
      findServer({ platform: "win32", envPath: "C:\\py\\Scripts;C:\\bin", envPathExt: ".COM;.EXE", isExecutable: files("C:\\bin\\fixlore.EXE") }),
    );
    assert.equal(onPath.command, "C:\\bin\\fixlore.EXE");
  });
});

describe("findServer on the real file system", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fixlore-discovery-"));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it("finds an executable .venv/bin/fixlore and ignores one without the execute bit", { skip: process.platform === "win32" }, () => {
    const bin = path.join(root, "ws", ".venv", "bin");
    fs.mkdirSync(bin, { recursive: true });
    const exe = path.join(bin, "fixlore");
    fs.writeFileSync(exe, "#!/bin/sh\n");
    fs.chmodSync(exe, 0o644);
    const notExecutable = findServer({ workspaceFolders: [path.join(root, "ws")], envPath: "" });
    assert.ok(!isServerCommand(notExecutable));
    fs.chmodSync(exe, 0o755);
    assert.equal(ok(findServer({ workspaceFolders: [path.join(root, "ws")], envPath: "" })).command, exe);
  });

  it("does not take a directory named fixlore on PATH for the executable", { skip: process.platform === "win32" }, () => {
    const dir = path.join(root, "pathdir");
    fs.mkdirSync(path.join(dir, "fixlore"), { recursive: true });
    assert.ok(!isServerCommand(findServer({ envPath: dir })));
  });
});
