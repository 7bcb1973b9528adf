/**
 * Finding the fixlore server to start.
 *
 * Pure apart from the file-system probe, which is injected, so it is
 * unit-tested under plain Node. Order: setting `fixlore.path` → setting
 * `fixlore.interpreter` (`<python> -m fixlore.lsp serve`) → the
 * workspace's `.venv` → `fixlore` on `PATH` → an error a person can act on.
 */

import * as fs from "node:fs";
import * as path from "node:path";

/** Arguments that make the `fixlore` executable serve LSP over stdio. */
export const SERVE_ARGS: readonly string[] = ["serve", "--stdio"];

/** The module a Python interpreter runs to start fixlore. */
export const SERVER_MODULE = "fixlore.lsp";

export type CommandSource = "setting:path" | "setting:interpreter" | "workspace-venv" | "PATH";

export interface ServerCommand {
  command: string;
  args: string[];
  source: CommandSource;
}

export interface DiscoveryError {
  error: string;
  /** True when the user named a path in the settings that does not work. */
  fromSetting: boolean;
}

export interface DiscoveryInput {
  /** `fixlore.path`: the fixlore executable. */
  path?: string;
  /** `fixlore.interpreter`: a Python interpreter with fixlore installed. */
  interpreter?: string;
  /** Workspace folder paths (file system), first folder first. */
  workspaceFolders?: readonly string[];
  /** Value of the `PATH` environment variable. */
  envPath?: string;
  /** Value of `PATHEXT` (Windows only). */
  envPathExt?: string;
  platform?: NodeJS.Platform;
  /** The user's home directory, for a leading `~` in settings. */
  home?: string;
  /** Whether a file exists and can be executed; defaults to the real file system. */
  isExecutable?: (file: string) => boolean;
}

export function isServerCommand(found: ServerCommand | DiscoveryError): found is ServerCommand {
  return "command" in found;
}

/** Resolve the command that starts the fixlore server, or say why none was found. */
export function findServer(input: DiscoveryInput): ServerCommand | DiscoveryError {
  const platform = input.platform ?? process.platform;
  const isExecutable = input.isExecutable ?? defaultIsExecutable(platform);
  const folders = input.workspaceFolders ?? [];
  const expand = (setting: string): string => expandSetting(setting, input.home, folders[0]);

  const configuredPath = input.path?.trim();
  if (configuredPath) {
    const file = resolveCommand(expand(configuredPath), input, platform, isExecutable);
    if (file === undefined) {
      return {
        error: `fixlore.path is set to "${configuredPath}", but no executable is there.`,
        fromSetting: true,
      };
    }
    return { command: file, args: [...SERVE_ARGS], source: "setting:path" };
  }

  const interpreter = input.interpreter?.trim();
  if (interpreter) {
    const file = resolveCommand(expand(interpreter), input, platform, isExecutable);
    if (file === undefined) {
      return {
        error: `fixlore.interpreter is set to "${interpreter}", but no Python interpreter is there.`,
        fromSetting: true,
      };
    }
    return { command: file, args: ["-m", SERVER_MODULE, ...SERVE_ARGS], source: "setting:interpreter" };
  }

  for (const folder of folders) {
    const candidate = venvExecutable(folder, platform);
    if (isExecutable(candidate)) {
      return { command: candidate, args: [...SERVE_ARGS], source: "workspace-venv" };
    }
  }

  const onPath = searchPath("fixlore", input.envPath ?? "", input.envPathExt, platform, isExecutable);
  if (onPath !== undefined) {
    return { command: onPath, args: [...SERVE_ARGS], source: "PATH" };
  }

  return {
    error:
      "fixlore was not found. It is not on PyPI: install it from its repository " +
      "(pipx install ./fixlore, or pip install ./fixlore into a virtual environment), " +
      "then set fixlore.path to its fixlore executable or fixlore.interpreter to that Python, " +
      "or put fixlore on PATH.",
    fromSetting: false,
  };
}

/** The fixlore executable inside a workspace folder's `.venv`. */
export function venvExecutable(folder: string, platform: NodeJS.Platform): string {
  const p = platform === "win32" ? path.win32 : path.posix;
  return platform === "win32"
    ? p.join(folder, ".venv", "Scripts", "fixlore.exe")
    : p.join(folder, ".venv", "bin", "fixlore");
}

/** Look a bare program name up on `PATH`, as a shell would. */
export function searchPath(
  name: string,
  envPath: string,
  envPathExt: string | undefined,
  platform: NodeJS.Platform,
  isExecutable: (file: string) => boolean,
): string | undefined {
  const p = platform === "win32" ? path.win32 : path.posix;
  const delimiter = platform === "win32" ? ";" : ":";
  const extensions =
    platform === "win32" ? ["", ...(envPathExt ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)] : [""];
  for (const dir of envPath.split(delimiter)) {
    if (dir === "") {
      continue;
    }
    for (const ext of extensions) {
      const candidate = p.join(dir, name + ext);
      if (isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** A setting is a path (absolute, or relative to the first workspace folder) or a bare name on PATH. */
function resolveCommand(
  setting: string,
  input: DiscoveryInput,
  platform: NodeJS.Platform,
  isExecutable: (file: string) => boolean,
): string | undefined {
  const p = platform === "win32" ? path.win32 : path.posix;
  const bare = !setting.includes("/") && !(platform === "win32" && setting.includes("\\"));
  if (bare) {
    return searchPath(setting, input.envPath ?? "", input.envPathExt, platform, isExecutable);
  }
  const folder = input.workspaceFolders?.[0];
  const file = p.isAbsolute(setting) || folder === undefined ? setting : p.resolve(folder, setting);
  return isExecutable(file) ? file : undefined;
}

function expandSetting(setting: string, home: string | undefined, folder: string | undefined): string {
  let out = setting;
  if (folder !== undefined) {
    out = out.split("${workspaceFolder}").join(folder);
  }
  if (home !== undefined && (out === "~" || out.startsWith("~/"))) {
    out = home + out.slice(1);
  }
  return out;
}

function defaultIsExecutable(platform: NodeJS.Platform): (file: string) => boolean {
  return (file) => {
    try {
      if (!fs.statSync(file).isFile()) {
        return false;
      }
      if (platform !== "win32") {
        fs.accessSync(file, fs.constants.X_OK);
      }
      return true;
    } catch {
      return false;
    }
  };
}
