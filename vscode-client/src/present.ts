/**
 * Turning fixlore's command results into what a person reads.
 *
 * Pure (no `vscode` import): the status-bar text, pattern pick-list items and
 * the Markdown of "explain the ranking". Results come from the server's
 * commands (docs/CONTRACTS.md, "Commands") and are treated as untrusted
 * shapes: a missing field shows as such instead of throwing.
 */

/** Body of the `fixlore/status` notification. */
export interface Status {
  learning: boolean;
  patterns: number;
}

export type ServerState = "starting" | "running" | "stopped" | "failed";

export interface StatusView {
  text: string;
  tooltip: string;
}

/** A pattern as `fixlore.patterns` lists it. */
export interface PatternEntry {
  id: string;
  label: string;
  description: string;
  detail: string;
}

export function parseStatus(value: unknown): Status | undefined {
  if (!isObject(value) || typeof value.learning !== "boolean" || typeof value.patterns !== "number") {
    return undefined;
  }
  return { learning: value.learning, patterns: value.patterns };
}

/** What this session taught fixlore: quick fixes chosen, fixes made by hand (from `fixlore.stats`). */
export interface Learned {
  chosen: number;
  byHand: number;
}

/** The learning counters (`accepted`, `manual`) of a `fixlore.stats` result, or `undefined`. */
export function learningCounts(stats: unknown): Learned | undefined {
  if (!isObject(stats) || !isObject(stats.counts)) {
    return undefined;
  }
  const { accepted, manual } = stats.counts;
  if (typeof accepted !== "number" || typeof manual !== "number") {
    return undefined;
  }
  return { chosen: accepted, byHand: manual };
}

/** What was learned since `start` (counters only grow; a reset store counts from zero again). */
export function learnedSince(start: Learned, now: Learned): Learned {
  return { chosen: Math.max(0, now.chosen - start.chosen), byHand: Math.max(0, now.byHand - start.byHand) };
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Status-bar text and tooltip for the server's state and its last status. */
export function statusView(
  state: ServerState,
  status: Status | undefined,
  detail?: string,
  learned?: Learned,
): StatusView {
  if (state === "starting") {
    return { text: "$(sync~spin) fixlore", tooltip: "fixlore: starting the server…" };
  }
  if (state === "failed" || state === "stopped") {
    const why = detail ? `: ${detail}` : "";
    return {
      text: "$(warning) fixlore",
      tooltip: `fixlore: the server is not running${why}. Click to restart it.`,
    };
  }
  if (status === undefined) {
    return { text: "$(lightbulb) fixlore", tooltip: "fixlore: running. Click to toggle learning." };
  }
  const known = `${status.patterns} ${status.patterns === 1 ? "pattern" : "patterns"} known`;
  const total = learned === undefined ? 0 : learned.chosen + learned.byHand;
  // The count moves when the session teaches fixlore something, even when no new pattern appears.
  const moved = total > 0 ? ` +${total}` : "";
  const session =
    learned === undefined
      ? ""
      : ` Learned this session: ${plural(learned.chosen, "quick fix chosen", "quick fixes chosen")}, ` +
        `${plural(learned.byHand, "fix made by hand", "fixes made by hand")}.`;
  return status.learning
    ? {
        text: `$(lightbulb) fixlore ${status.patterns}${moved}`,
        tooltip: `fixlore: learning is on, ${known}.${session} Click to turn learning off.`,
      }
    : {
        text: `$(circle-slash) fixlore ${status.patterns}${moved}`,
        tooltip: `fixlore: learning is off (nothing is written), ${known}.${session} Click to turn learning on.`,
      };
}

/** Pick-list entries for the result of `fixlore.patterns`. */
export function patternEntries(result: unknown): PatternEntry[] {
  if (!Array.isArray(result)) {
    return [];
  }
  const entries: PatternEntry[] = [];
  for (const item of result) {
    if (!isObject(item) || (typeof item.id !== "string" && typeof item.id !== "number")) {
      continue;
    }
    entries.push({
      id: String(item.id),
      label: signatureText(item.signature),
      description: typeof item.category === "string" ? item.category : "",
      detail: countsText(item),
    });
  }
  return entries;
}

/** The signature as one line: `Ruff F401 — Unused import `$1``. */
export function signatureText(signature: unknown): string {
  if (typeof signature === "string") {
    return signature;
  }
  if (!isObject(signature)) {
    return "(no signature)";
  }
  const head = [signature.source, signature.code].filter((p) => typeof p === "string" && p !== "");
  const message = typeof signature.message === "string" ? signature.message : "";
  return [head.join(" "), message].filter((p) => p !== "").join(" — ") || "(no signature)";
}

/** `accepted 3 · rejected 1 · id 3f2a…` from whatever counters the entry carries. */
export function countsText(item: Record<string, unknown>): string {
  const counts: [string, unknown][] = isObject(item.counts)
    ? Object.entries(item.counts)
    : Object.entries(item).filter(([key]) => !["id", "signature", "category", "shape", "action"].includes(key));
  const parts = counts
    .filter(([, value]) => typeof value === "number")
    .map(([key, value]) => `${key} ${value as number}`);
  parts.push(`id ${String(item.id)}`);
  return parts.join(" · ");
}

/** Markdown for the result of `fixlore.explain`. */
export function explanationMarkdown(result: unknown): string {
  const diagnostics = isObject(result) && Array.isArray(result.diagnostics) ? result.diagnostics : [];
  const lines = ["# fixlore: why the fixes rank as they do", ""];
  if (diagnostics.length === 0) {
    lines.push("No diagnostic at the cursor.");
    return lines.join("\n") + "\n";
  }
  for (const diagnostic of diagnostics) {
    const d = isObject(diagnostic) ? diagnostic : {};
    lines.push(`## ${typeof d.message === "string" ? d.message : "(diagnostic)"}`, "");
    const actions = Array.isArray(d.actions) ? d.actions : [];
    if (actions.length === 0) {
      lines.push("No fixes offered.", "");
      continue;
    }
    actions.forEach((action, index) => {
      const a = isObject(action) ? action : {};
      const title = typeof a.title === "string" ? a.title : "(untitled)";
      const score = typeof a.score === "number" ? a.score.toFixed(3) : "?";
      const preferred = a.preferred === true ? " — preferred" : "";
      lines.push(`${index + 1}. **${title}** (score ${score}${preferred})`);
      const why = Array.isArray(a.explanation) ? a.explanation : [];
      for (const reason of why) {
        lines.push(`    - ${String(reason)}`);
      }
    });
    lines.push("");
  }
  return lines.join("\n");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
