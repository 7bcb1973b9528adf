/**
 * The mapping from VS Code's `fixlore.*` settings to fixlore's configuration.
 *
 * Pure: no `vscode` import, so it is unit-tested under plain Node. The wire
 * form is the one in docs/CONTRACTS.md ("Configuration"): camelCase keys under
 * `fixlore`, sent as `initializationOptions.fixlore`, as the answer to
 * `workspace/configuration` for section `fixlore`, and in
 * `workspace/didChangeConfiguration`.
 */

/** The languages fixlore serves (LSP language ids), as `abstraction.supported_languages()`. */
export const SERVED_LANGUAGES: readonly string[] = [
  "python",
  "javascript",
  "javascriptreact",
  "typescript",
  "typescriptreact",
  "shellscript",
  "go",
  "rust",
  "java",
  "c",
];

/**
 * The documents the client hands to fixlore: files and untitled editors of the
 * served languages, and notebook cells of them (fixlore forwards notebooks to
 * the upstreams that sync them; without the cell scheme VS Code would not ask
 * fixlore for a cell's code actions or diagnostics).
 */
export function documentSelector(): { scheme: string; language: string }[] {
  return SERVED_LANGUAGES.flatMap((language) =>
    ["file", "untitled", "vscode-notebook-cell"].map((scheme) => ({ scheme, language })),
  );
}

export const LOG_LEVELS = ["error", "warning", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One upstream server, as fixlore expects it on the wire. */
export interface UpstreamConfig {
  command: string[];
  name?: string;
  initializationOptions?: unknown;
  settings?: unknown;
}

/** fixlore's configuration, camelCase, as the server reads it. */
export interface ServerConfig {
  upstreams: Record<string, UpstreamConfig[]>;
  learning: boolean;
  workspaceKnowledge: boolean;
  baseKnowledge: boolean;
  logLevel: LogLevel;
  diagnosticsDebounceMs: number;
  manualFixPauseMs: number;
  upstreamTimeoutMs: number;
  /** The team store (docs/team.md): a PostgreSQL connection string or libpq service name, never a password. */
  teamKnowledge: string;
  teamMinWorkspaces: number;
  teamMinApprovals: number;
}

/** The defaults of the server (lsp/config.py), for reference; the extension never sends them. */
export const DEFAULT_CONFIG: Readonly<ServerConfig> = Object.freeze({
  upstreams: {},
  learning: true,
  workspaceKnowledge: false,
  baseKnowledge: true,
  logLevel: "info",
  diagnosticsDebounceMs: 250,
  manualFixPauseMs: 2000,
  upstreamTimeoutMs: 3000,
  teamKnowledge: "",
  teamMinWorkspaces: 3,
  teamMinApprovals: 2,
});

/** The largest millisecond value the server accepts (lsp/config.py). */
export const MAX_MILLIS = 600_000;

/** The keys of the `fixlore` settings section that reach the server. */
export const SERVER_SETTING_KEYS: readonly (keyof ServerConfig)[] = Object.keys(
  DEFAULT_CONFIG,
) as (keyof ServerConfig)[];

/** The settings that only tell the extension how to start the server. */
export const LAUNCH_SETTING_KEYS: readonly string[] = ["path", "interpreter"];

/** What the extension sends: only the settings the user set, so the server's precedence holds. */
export type ServerSettings = Partial<ServerConfig>;

/**
 * Reads one setting as the user set it (`undefined` when unset, so that the
 * server's defaults and `pyproject.toml [tool.fixlore]` apply), e.g. from
 * `vscode.WorkspaceConfiguration.inspect`, or from a plain object.
 */
export type SettingsReader = (key: string) => unknown;

export interface MappedConfig {
  config: ServerSettings;
  /** What was wrong with the settings, for a person to act on; those settings are left out. */
  problems: string[];
}

/** Build a reader over a plain object of settings (tests, other callers). */
export function readerOf(settings: Record<string, unknown>): SettingsReader {
  return (key) => settings[key];
}

/**
 * Map the settings the user set to fixlore's configuration (camelCase wire form).
 *
 * Unset settings are left out rather than filled with defaults: the server's
 * precedence is defaults < `pyproject.toml` < `workspace/configuration` <
 * `initializationOptions`, and a default sent by the editor would hide a
 * project's `[tool.fixlore]`. Invalid values do not stop the server either:
 * each is left out and named in `problems`, so the extension can tell the
 * user once.
 */
export function toServerConfig(read: SettingsReader): MappedConfig {
  const problems: string[] = [];
  const config: ServerSettings = {};
  const set = <K extends keyof ServerConfig>(key: K, value: ServerConfig[K] | undefined): void => {
    if (value !== undefined) {
      config[key] = value;
    }
  };
  const given = (key: keyof ServerConfig): unknown => {
    const value = read(key);
    return value === null ? undefined : value;
  };
  const bool = (key: "learning" | "workspaceKnowledge" | "baseKnowledge"): boolean | undefined => {
    const value = given(key);
    if (value === undefined || typeof value === "boolean") {
      return value;
    }
    problems.push(`fixlore.${key} must be true or false; ignored (default: ${DEFAULT_CONFIG[key]}).`);
    return undefined;
  };
  const millis = (key: "diagnosticsDebounceMs" | "manualFixPauseMs" | "upstreamTimeoutMs"): number | undefined => {
    const value = given(key);
    if (value === undefined) {
      return undefined;
    }
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_MILLIS) {
      problems.push(
        `fixlore.${key} must be a whole number of milliseconds from 0 to ${MAX_MILLIS}; ignored (default: ${DEFAULT_CONFIG[key]}).`,
      );
      return undefined;
    }
    return value;
  };
  set("upstreams", mapUpstreams(given("upstreams"), problems));
  set("learning", bool("learning"));
  set("workspaceKnowledge", bool("workspaceKnowledge"));
  set("baseKnowledge", bool("baseKnowledge"));
  set("logLevel", mapLogLevel(given("logLevel"), problems));
  set("diagnosticsDebounceMs", millis("diagnosticsDebounceMs"));
  set("manualFixPauseMs", millis("manualFixPauseMs"));
  set("upstreamTimeoutMs", millis("upstreamTimeoutMs"));
  set("teamKnowledge", mapTeamKnowledge(given("teamKnowledge"), problems));
  const atLeastOne = (key: "teamMinWorkspaces" | "teamMinApprovals"): number | undefined => {
    const value = given(key);
    if (value === undefined || (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 1000)) {
      return value as number | undefined;
    }
    problems.push(`fixlore.${key} must be a whole number from 1 to 1000; ignored (default: ${DEFAULT_CONFIG[key]}).`);
    return undefined;
  };
  set("teamMinWorkspaces", atLeastOne("teamMinWorkspaces"));
  set("teamMinApprovals", atLeastOne("teamMinApprovals"));
  return { config, problems };
}

/**
 * The answer to `workspace/configuration` for one item.
 *
 * Section `fixlore` gets the mapped settings and `fixlore.<key>` one of them
 * (`null` when unset); any other section is not ours (`undefined`: let the
 * default handler answer it).
 */
export function configurationFor(section: string | undefined, config: ServerSettings): unknown {
  if (section === "fixlore") {
    return config;
  }
  if (section?.startsWith("fixlore.")) {
    const key = section.slice("fixlore.".length);
    return (config as Record<string, unknown>)[key] ?? null;
  }
  return undefined;
}

/**
 * Whether a settings change needs a restart rather than a
 * `workspace/didChangeConfiguration` notification.
 *
 * A restart is needed when the launch command changed, when the upstreams
 * changed (they are started at initialize), and when a changed setting was
 * sent in `initializationOptions`: the server ranks those above
 * `workspace/configuration`, so a notification could not override them.
 */
export function changeNeedsRestart(affects: (key: string) => boolean, sentAtStart: ServerSettings): boolean {
  const keys = [...LAUNCH_SETTING_KEYS, "upstreams", ...Object.keys(sentAtStart)];
  return keys.some((key) => affects(`fixlore.${key}`));
}

/** As the server's `team_conninfo`: a password in the setting is refused (libpq reads it from ~/.pgpass). */
const PASSWORD = [/(?:^|\s)password\s*=/i, /^[a-z]+:\/\/[^/@?]*:[^/@?]*@/i, /[?&]password=/i];

function mapTeamKnowledge(value: unknown, problems: string[]): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (typeof value !== "string") {
    problems.push("fixlore.teamKnowledge must be a connection string or a libpq service name; ignored.");
    return undefined;
  }
  if (PASSWORD.some((re) => re.test(value.trim()))) {
    problems.push(
      "fixlore.teamKnowledge holds a password; ignored (put the password in ~/.pgpass or PGPASSFILE instead).",
    );
    return undefined;
  }
  return value.trim();
}

function mapLogLevel(value: unknown, problems: string[]): LogLevel | undefined {
  if (value === undefined || value === "") {
    return undefined;
  }
  const level = typeof value === "string" ? value.toLowerCase() : value;
  if (level === "warn") {
    return "warning";
  }
  if (typeof level === "string" && (LOG_LEVELS as readonly string[]).includes(level)) {
    return level as LogLevel;
  }
  problems.push(`fixlore.logLevel must be one of ${LOG_LEVELS.join(", ")}; ignored (default: info).`);
  return undefined;
}

function mapUpstreams(value: unknown, problems: string[]): Record<string, UpstreamConfig[]> | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (!isPlainObject(value)) {
    problems.push("fixlore.upstreams must be an object mapping a language id to a list of servers; ignored.");
    return undefined;
  }
  const out: Record<string, UpstreamConfig[]> = {};
  for (const [language, entries] of Object.entries(value)) {
    const list = Array.isArray(entries) ? entries : [entries];
    const servers: UpstreamConfig[] = [];
    list.forEach((entry, index) => {
      const server = mapUpstream(entry);
      if (server === undefined) {
        problems.push(
          `fixlore.upstreams.${language}[${index}] needs "command": a non-empty list of strings; ignored.`,
        );
      } else {
        servers.push(server);
      }
    });
    if (servers.length > 0) {
      out[language] = servers;
    }
  }
  return out;
}

function mapUpstream(entry: unknown): UpstreamConfig | undefined {
  // Shorthands, as the server accepts them: a command line, or a list of strings.
  const raw: unknown = typeof entry === "string" || Array.isArray(entry) ? { command: entry } : entry;
  if (!isPlainObject(raw)) {
    return undefined;
  }
  const command = typeof raw.command === "string" ? splitCommandLine(raw.command) : raw.command;
  if (
    !Array.isArray(command) ||
    command.length === 0 ||
    !command.every((part) => typeof part === "string" && part.length > 0)
  ) {
    return undefined;
  }
  const server: UpstreamConfig = { command: [...(command as string[])] };
  if (typeof raw.name === "string" && raw.name.length > 0) {
    server.name = raw.name;
  }
  if (raw.initializationOptions !== undefined) {
    server.initializationOptions = raw.initializationOptions;
  }
  if (raw.settings !== undefined) {
    server.settings = raw.settings;
  }
  return server;
}

/**
 * Split a command line as a POSIX shell would (Python's `shlex.split`, which
 * the server uses for the same setting): whitespace separates words, single
 * quotes keep everything, double quotes keep all but backslash escapes.
 * Returns `undefined` for an unterminated quote.
 */
export function splitCommandLine(line: string): string[] | undefined {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote === "'") {
      if (ch === "'") {
        quote = undefined;
      } else {
        word += ch;
      }
    } else if (quote === '"') {
      if (ch === '"') {
        quote = undefined;
      } else if (ch === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) {
        word += line[++i];
      } else {
        word += ch;
      }
    } else if (/\s/.test(ch)) {
      if (inWord) {
        words.push(word);
        word = "";
        inWord = false;
      }
    } else {
      inWord = true;
      if (ch === "'" || ch === '"') {
        quote = ch;
      } else if (ch === "\\" && i + 1 < line.length) {
        word += line[++i];
      } else {
        word += ch;
      }
    }
  }
  if (quote !== undefined) {
    return undefined;
  }
  if (inWord) {
    words.push(word);
  }
  return words;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
