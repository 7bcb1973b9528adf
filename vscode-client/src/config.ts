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
}

export const DEFAULT_CONFIG: Readonly<ServerConfig> = Object.freeze({
  upstreams: {},
  learning: true,
  workspaceKnowledge: false,
  baseKnowledge: true,
  logLevel: "info",
  diagnosticsDebounceMs: 250,
  manualFixPauseMs: 2000,
  upstreamTimeoutMs: 3000,
});

/** The largest millisecond value the server accepts (lsp/config.py). */
export const MAX_MILLIS = 600_000;

/** The keys of the `fixlore` settings section that reach the server. */
export const SERVER_SETTING_KEYS: readonly (keyof ServerConfig)[] = Object.keys(
  DEFAULT_CONFIG,
) as (keyof ServerConfig)[];

/** The settings that only tell the extension how to start the server. */
export const LAUNCH_SETTING_KEYS: readonly string[] = ["path", "interpreter"];

/** Reads one setting; `vscode.WorkspaceConfiguration.get` fits, and so does a plain object. */
export type SettingsReader = (key: string) => unknown;

export interface MappedConfig {
  config: ServerConfig;
  /** What was wrong with the settings, for a person to act on; the defaults stand in. */
  problems: string[];
}

/** Build a reader over a plain object of settings (tests, other callers). */
export function readerOf(settings: Record<string, unknown>): SettingsReader {
  return (key) => settings[key];
}

/**
 * Map the user's settings to fixlore's configuration.
 *
 * Invalid values do not stop the server: each falls back to its default and
 * is named in `problems`, so the extension can tell the user once.
 */
export function toServerConfig(read: SettingsReader): MappedConfig {
  const problems: string[] = [];
  const bool = (key: "learning" | "workspaceKnowledge" | "baseKnowledge"): boolean => {
    const value = read(key);
    if (value === undefined || value === null) {
      return DEFAULT_CONFIG[key];
    }
    if (typeof value !== "boolean") {
      problems.push(`fixlore.${key} must be true or false; using ${DEFAULT_CONFIG[key]}.`);
      return DEFAULT_CONFIG[key];
    }
    return value;
  };
  const millis = (key: "diagnosticsDebounceMs" | "manualFixPauseMs" | "upstreamTimeoutMs"): number => {
    const value = read(key);
    if (value === undefined || value === null) {
      return DEFAULT_CONFIG[key];
    }
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_MILLIS) {
      problems.push(
        `fixlore.${key} must be a whole number of milliseconds from 0 to ${MAX_MILLIS}; using ${DEFAULT_CONFIG[key]}.`,
      );
      return DEFAULT_CONFIG[key];
    }
    return value;
  };
  return {
    config: {
      upstreams: mapUpstreams(read("upstreams"), problems),
      learning: bool("learning"),
      workspaceKnowledge: bool("workspaceKnowledge"),
      baseKnowledge: bool("baseKnowledge"),
      logLevel: mapLogLevel(read("logLevel"), problems),
      diagnosticsDebounceMs: millis("diagnosticsDebounceMs"),
      manualFixPauseMs: millis("manualFixPauseMs"),
      upstreamTimeoutMs: millis("upstreamTimeoutMs"),
    },
    problems,
  };
}

/**
 * The answer to `workspace/configuration` for one item.
 *
 * Section `fixlore` gets the mapped configuration and `fixlore.<key>` one of
 * its values; any other section is not ours (`undefined`: let the default
 * handler answer it).
 */
export function configurationFor(section: string | undefined, config: ServerConfig): unknown {
  if (section === "fixlore") {
    return config;
  }
  if (section?.startsWith("fixlore.")) {
    const key = section.slice("fixlore.".length);
    return key in config ? config[key as keyof ServerConfig] : null;
  }
  return undefined;
}

/** Whether a settings change needs a restart (the launch command changed) or only a notification. */
export function changeNeedsRestart(affects: (key: string) => boolean): boolean {
  return LAUNCH_SETTING_KEYS.some((key) => affects(`fixlore.${key}`));
}

function mapLogLevel(value: unknown, problems: string[]): LogLevel {
  if (value === undefined || value === null || value === "") {
    return DEFAULT_CONFIG.logLevel;
  }
  const level = typeof value === "string" ? value.toLowerCase() : value;
  if (level === "warn") {
    return "warning";
  }
  if (typeof level === "string" && (LOG_LEVELS as readonly string[]).includes(level)) {
    return level as LogLevel;
  }
  problems.push(`fixlore.logLevel must be one of ${LOG_LEVELS.join(", ")}; using info.`);
  return DEFAULT_CONFIG.logLevel;
}

function mapUpstreams(value: unknown, problems: string[]): Record<string, UpstreamConfig[]> {
  if (value === undefined || value === null) {
    return {};
  }
  if (!isPlainObject(value)) {
    problems.push("fixlore.upstreams must be an object mapping a language id to a list of servers.");
    return {};
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
