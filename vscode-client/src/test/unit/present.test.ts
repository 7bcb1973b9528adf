/** Unit tests of what the extension shows: status bar, pattern list, ranking explanation (src/present.ts). */

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  explanationMarkdown,
  learnedSince,
  learningCounts,
  parseStatus,
  patternEntries,
  statusView,
} from "../../present";

describe("status bar", () => {
  it("shows the number of patterns and whether learning is on", () => {
    const on = statusView("running", { learning: true, patterns: 12 });
    assert.match(on.text, /12/);
    assert.match(on.tooltip, /learning is on, 12 patterns known/);
    const off = statusView("running", { learning: false, patterns: 1 });
    assert.match(off.text, /circle-slash/);
    assert.match(off.tooltip, /learning is off.*1 pattern known/);
  });

  it("shows what the session taught fixlore: a count that moves and what it was", () => {
    const start = learningCounts({ patterns: 2, counts: { accepted: 4, manual: 1, offered: 9 } });
    assert.deepEqual(start, { chosen: 4, byHand: 1 });
    const now = learningCounts({ counts: { accepted: 7, manual: 3 } });
    assert.ok(start !== undefined && now !== undefined);
    const learned = learnedSince(start, now);
    assert.deepEqual(learned, { chosen: 3, byHand: 2 });
    const view = statusView("running", { learning: true, patterns: 2 }, undefined, learned);
    assert.match(view.text, /fixlore 2 \+5$/);
    assert.match(view.tooltip, /Learned this session: 3 quick fixes chosen, 2 fixes made by hand\./);
    const none = statusView("running", { learning: true, patterns: 2 }, undefined, { chosen: 0, byHand: 0 });
    assert.match(none.text, /fixlore 2$/);
    assert.equal(learningCounts({ counts: { accepted: "3" } }), undefined);
    assert.equal(learningCounts(null), undefined);
  });

  it("says when the server is not running, and why", () => {
    const view = statusView("failed", undefined, "fixlore was not found");
    assert.match(view.text, /warning/);
    assert.match(view.tooltip, /not running: fixlore was not found/);
  });

  it("accepts only a well-formed fixlore/status body", () => {
    assert.deepEqual(parseStatus({ learning: true, patterns: 3 }), { learning: true, patterns: 3 });
    assert.equal(parseStatus({ learning: "yes", patterns: 3 }), undefined);
    assert.equal(parseStatus(null), undefined);
  });
});

describe("pattern list", () => {
  it("makes one entry per pattern with its signature, category and counts", () => {
    const entries = patternEntries([
      {
        id: "3f2a",
        signature: { language: "python", source: "Ruff", code: "F401", message: "`$1` imported but unused" },
        category: "remove_import",
        counts: { accepted: 3, rejected: 1 },
      },
      { signature: "no id: skipped" },
    ]);
    assert.equal(entries.length, 1);
    assert.equal(entries[0].id, "3f2a");
    assert.equal(entries[0].label, "Ruff F401 — `$1` imported but unused");
    assert.equal(entries[0].description, "remove_import");
    assert.equal(entries[0].detail, "accepted 3 · rejected 1 · id 3f2a");
  });

  it("reads counters given at the top level too", () => {
    const [entry] = patternEntries([{ id: 7, signature: "s", category: "add_import", accepted: 2, manual: 4 }]);
    assert.equal(entry.detail, "accepted 2 · manual 4 · id 7");
  });

  it("is empty for a result that is not a list", () => {
    assert.deepEqual(patternEntries({ error: "x" }), []);
  });
});

describe("ranking explanation", () => {
  it("lists each diagnostic's actions in rank order with score and reasons", () => {
    const md = explanationMarkdown({
      diagnostics: [
        {
          message: "`os` imported but unused",
          actions: [
            { title: "Remove unused import", score: 0.8123, preferred: true, explanation: ["accepted 3 of 4 times"] },
            { title: "Disable for this line", score: 0.1, preferred: false, explanation: [] },
          ],
        },
      ],
    });
    assert.match(md, /## `os` imported but unused/);
    assert.match(md, /1\. \*\*Remove unused import\*\* \(score 0\.812 — preferred\)\n {4}- accepted 3 of 4 times/);
    assert.match(md, /2\. \*\*Disable for this line\*\* \(score 0\.100\)/);
  });

  it("says so when there is no diagnostic at the cursor", () => {
    assert.match(explanationMarkdown({ diagnostics: [] }), /No diagnostic at the cursor/);
  });
});
