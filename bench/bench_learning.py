"""Benchmarks of the learning loop: ranking quality, learned fixes, added code-action latency.

Prints figures (ratios against baselines measured in the same run); not a test.

1. Ranking quality: simulated users with hidden per-rule preferences over
   ruff's quick fixes ("the fix" or "Disable for this line"), replayed through
   the real ``fixlore serve`` + ``ruff server`` on standard-library files. Each
   user follows their habit 90 % of the time. Reported: top-1 rate of the
   action the user then picks, once they chose for that rule 3 times, for
   fixlore and for ruff's own order; and the 0.90 ceiling measured on the
   same picks (share of picks that followed the habit).
2. Learned fixes: realistic mistakes planted in stdlib files (a used stdlib
   import removed -> F821; ``is None`` -> ``== None`` -> E711), replayed in
   order; the original text is the human fix. Each is learned from (the
   server's own extract -> store path, in process) after being predicted:
   share where the top learned fix equals the human fix (whitespace
   normalised) and share where it at least removes the diagnostic.
3. Latency: the same code-action request against ``ruff server`` alone and
   through fixlore with 100k stored patterns, side by side in one run,
   alternating; p50/p99, the difference, the ratio and fixlore's CPU per request.

Usage: ``python bench/bench_learning.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.learning._editor import Editor  # noqa: E402

BIN = Path(sys.executable).parent
RUFF = str(BIN / "ruff")
STDLIB = Path(sysconfig.get_paths()["stdlib"])
RULES = ["F401", "F841", "E711", "E712", "E713", "UP", "SIM", "C4", "PIE", "RET", "Q", "COM", "D", "EM", "FURB"]
DISABLE = "Disable for this line"


def stdlib_files(n: int, seed: int) -> list[Path]:
    files = sorted(p for p in STDLIB.glob("*.py") if 2_000 < p.stat().st_size < 40_000)
    random.Random(seed).shuffle(files)
    return files[:n]


# -- 1. ranking quality -------------------------------------------------------------------------
async def replay_user(files: list[Path], seed: int, steps_per_file: int) -> tuple[int, int, int, int]:
    """Returns (counted events, fixlore top-1 hits, ruff-order hits, picks that followed the habit)."""
    rng = random.Random(seed)
    habit: dict[str, str] = {}
    chosen: dict[str, int] = {}
    counted = hits = ruff_hits = followed = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text(f"[tool.ruff.lint]\nselect = {json.dumps(RULES)}\n")
        os.environ["FIXLORE_HOME"] = str(root / "home")
        async with Editor(root, settings={"manualFixPauseMs": 200}) as editor:
            for i, path in enumerate(files):
                uri = editor.open(f"m{i}.py", path.read_text(encoding="utf-8"))
                for _ in range(steps_per_file):
                    try:
                        await editor.wait_for(
                            lambda uri=uri: editor.diagnostic_versions.get(uri) == editor.versions[uri],
                            timeout=5,
                        )
                    except TimeoutError:
                        break
                    diags = [d for d in editor.current(uri) if d.get("source") == "Ruff" and d.get("code")]
                    rng.shuffle(diags)
                    picked = None
                    for diag in diags[:30]:
                        actions = await editor.code_actions(uri, diag)
                        quick = [a for a in actions if a.get("kind") == "quickfix"]
                        if len(quick) >= 2:
                            picked = (diag, quick)
                            break
                    if picked is None:
                        break
                    diag, quick = picked
                    rule = str(diag["code"])
                    habit.setdefault(rule, rng.choice(["fix", "disable"]))
                    want = habit[rule] if rng.random() < 0.9 else ("disable" if habit[rule] == "fix" else "fix")
                    followed_now = want == habit[rule]

                    def is_want(a: dict[str, Any], want: str = want) -> bool:
                        return (DISABLE in a["title"]) == (want == "disable")

                    if chosen.get(rule, 0) >= 3:
                        counted += 1
                        hits += is_want(quick[0])
                        ruff_order = sorted(quick, key=lambda a: DISABLE in a["title"])  # ruff: fix first
                        ruff_hits += is_want(ruff_order[0])
                        followed += followed_now
                    chosen[rule] = chosen.get(rule, 0) + 1
                    action = next(a for a in quick if is_want(a))
                    await editor.apply(action)
    return counted, hits, ruff_hits, followed


def bench_ranking(quick: bool) -> None:
    files = stdlib_files(8 if quick else 24, seed=1)
    users = 2 if quick else 5
    steps = 30 if quick else 60
    totals = [0, 0, 0, 0]
    for u in range(users):
        result = asyncio.run(replay_user(files, seed=100 + u, steps_per_file=steps))
        totals = [a + b for a, b in zip(totals, result, strict=True)]
    counted, hits, ruff_hits, followed = totals
    if not counted:
        print("ranking: no events counted")
        return
    print(f"ranking quality ({users} users, {len(files)} stdlib files, {counted} counted events):")
    print(f"  fixlore top-1           {hits / counted:.3f}")
    print(f"  ruff order top-1        {ruff_hits / counted:.3f}")
    print(f"  ceiling (habit-follow)  {followed / counted:.3f}")
    print(f"  gap to ceiling          {(followed - hits) / counted:+.3f}")


# -- 2. learned fixes ---------------------------------------------------------------------------
def ruff_diags(text: str, select: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [RUFF, "check", "--no-cache", "--isolated", "--select", select, "--output-format", "json", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    return json.loads(proc.stdout or "[]")


def plant(text: str, rng: random.Random) -> list[tuple[str, str, str]]:
    """(rule, planted text, original text) mistakes for one file."""
    out: list[tuple[str, str, str]] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.fullmatch(r"import (\w+)", line)
        if m and re.search(rf"\b{m.group(1)}\.", text):
            out.append(("F821", "\n".join(lines[:i] + lines[i + 1 :]), text))
        if " is None" in line and "==" not in line and len(out) < 12:
            planted = "\n".join(lines[:i] + [line.replace(" is None", " == None", 1)] + lines[i + 1 :])
            out.append(("E711", planted, text))
    rng.shuffle(out)
    return out[:4]


def bench_learned(quick: bool) -> None:
    from fixlore.abstraction import (
        DiagnosticInfo,
        Extracted,
        Instantiated,
        Position,
        TextRange,
        abstract_signature,
        apply_edits,
        extract_pattern,
        instantiate,
    )
    from fixlore.knowledge import Event, EventKind, Knowledge

    rng = random.Random(7)
    events = [m for p in stdlib_files(30 if quick else 120, seed=2) for m in plant(p.read_text(encoding="utf-8"), rng)]
    per_rule: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        knowledge = Knowledge.open(Path(tmp), base=False)
        seen: dict[str, int] = {}
        for rule, planted, original in events:
            diags = [d for d in ruff_diags(planted, rule) if d["code"] == rule]
            if not diags:
                continue
            d = diags[0]
            start, end = d["location"], d["end_location"]
            info = DiagnosticInfo(
                "Ruff",
                rule,
                d["message"],
                TextRange(Position(start["row"] - 1, start["column"] - 1), Position(end["row"] - 1, end["column"] - 1)),
            )
            sig = abstract_signature("python", info)
            if seen.get(rule, 0) >= 1:  # a recurring signature: predict before learning
                stats = per_rule.setdefault(rule, [0, 0, 0])
                stats[0] += 1
                for found in knowledge.learned_fixes(sig)[:3]:
                    if found.pattern is None:
                        continue
                    result = instantiate(found.pattern, "python", planted, info)
                    if isinstance(result, Instantiated) and result.edits:
                        fixed = apply_edits(planted, result.edits)
                        stats[1] += " ".join(fixed.split()) == " ".join(original.split())
                        after = ruff_diags(fixed, "E,F")
                        stats[2] += not any(x["code"] == rule for x in after) and len(after) <= len(
                            ruff_diags(original, "E,F")
                        )
                        break
            seen[rule] = seen.get(rule, 0) + 1
            learned = extract_pattern("python", planted, original, info)
            if isinstance(learned, Extracted):
                knowledge.record(Event(EventKind.MANUAL, learned.pattern, "bench", time.time()))
        knowledge.close()
    print("learned fixes (stdlib files, planted mistakes, human fix = original text):")
    for rule, (n, exact, removes) in sorted(per_rule.items()):
        print(f"  {rule}: {n} recurring events, top-1 exact {exact / n:.2f}, removes diagnostic {removes / n:.2f}")


# -- 3. latency ---------------------------------------------------------------------------------
def populate(home: Path, n: int) -> None:
    from fixlore.abstraction import ActionTemplate, FixCategory, Pattern, Signature
    from fixlore.knowledge import Event, EventKind, Knowledge

    knowledge = Knowledge.open(home, base=False, batch_max=5000)
    for i in range(n):
        # 2% under the rule the requests hit (F401), the rest spread over 5000 rules.
        code = "F401" if i % 50 == 0 else f"B{i % 5000}"
        sig = Signature("python", "Ruff", code, "`$1` imported but unused")
        action = ActionTemplate(f"quickfix.v{i}", "$2 ($3): Disable for this line")
        p = Pattern(sig, FixCategory.OTHER, action=action)
        knowledge.record(Event(EventKind.ACCEPTED, p, "bench", time.time()))
    knowledge.close(timeout=600)


async def ruff_alone(text: str) -> tuple[Any, Any, Any]:
    """``ruff server`` with the same file open, and the code-action params of its F401."""
    from fixlore.lsp.transport.jsonrpc import spawn

    got: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def note(method: str, params: Any) -> None:
        if method == "textDocument/publishDiagnostics" and params["diagnostics"] and not got.done():
            got.set_result(params["diagnostics"])

    async def req(i: Any, method: str, params: Any) -> Any:
        return [None for _ in params.get("items", [])] if method == "workspace/configuration" else None

    proc, conn = await spawn([RUFF, "server"], on_notification=note, on_request=req)
    await conn.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    conn.notify("initialized", {})
    uri = "file:///bench/lat.py"
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
    conn.notify("textDocument/didOpen", {"textDocument": doc})
    diag = next(d for d in await asyncio.wait_for(got, 10) if d.get("code") == "F401")
    context = {"diagnostics": [diag], "triggerKind": 1}
    return proc, conn, {"textDocument": {"uri": uri}, "range": diag["range"], "context": context}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process (not its children), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_latency(quick: bool) -> None:
    n_patterns = 100_000
    n = 1000 if quick else 3000
    text = "import json\n\n\ndef main():\n    return 1\n"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        t0 = time.perf_counter()
        populate(home, n_patterns)
        print(f"latency: populated {n_patterns} patterns in {time.perf_counter() - t0:.1f}s")
        os.environ["FIXLORE_HOME"] = str(home)

        async def side_by_side() -> None:
            # Both paths in one loop, requests alternating (order flipped every
            # round), so the shared machine's noise hits both alike.
            root = Path(tmp) / "ws"
            root.mkdir()
            proc, conn, params = await ruff_alone(text)
            async with Editor(root) as editor:
                uri = editor.open("lat.py", text)
                diag = await editor.diagnostic(uri, "F401")
                stats = await editor.until_stats(lambda s: s["patterns"] >= n_patterns, timeout=120)
                assert stats["patterns"] >= n_patterns and editor.process is not None
                pid = editor.process.pid
                for trigger, label in ((2, "automatic (nothing recorded)"), (1, "invoked (OFFERED recorded)")):
                    for _ in range(20):  # warm-up
                        await editor.code_actions(uri, diag, trigger)
                        await conn.request("textDocument/codeAction", params)
                    ours: list[float] = []
                    alone: list[float] = []

                    async def fixlore_once(trigger: int = trigger, ours: list[float] = ours) -> None:
                        t = time.perf_counter()
                        await editor.code_actions(uri, diag, trigger)
                        ours.append((time.perf_counter() - t) * 1000)

                    async def ruff_once(alone: list[float] = alone) -> None:
                        t = time.perf_counter()
                        await conn.request("textDocument/codeAction", params)
                        alone.append((time.perf_counter() - t) * 1000)

                    cpu0 = cpu_seconds(pid)
                    for i in range(n):
                        first, second = (fixlore_once, ruff_once) if i % 2 else (ruff_once, fixlore_once)
                        await first()
                        await second()
                    cpu = (cpu_seconds(pid) - cpu0) / n * 1000
                    a50, a99, o50, o99 = pct(alone, 0.5), pct(alone, 0.99), pct(ours, 0.5), pct(ours, 0.99)
                    print(f"  {label}, n={n}:")
                    print(f"    ruff alone      p50 {a50:.2f} ms  p99 {a99:.2f} ms")
                    print(f"    through fixlore p50 {o50:.2f} ms  p99 {o99:.2f} ms  (fixlore CPU {cpu:.2f} ms/request)")
                    added = f"p50 {o50 - a50:+.2f} ms  p99 {o99 - a99:+.2f} ms"
                    print(f"    added           {added}  ratio p50 {o50 / a50:.2f}x")
            await conn.request("shutdown")
            conn.notify("exit")
            await proc.wait()

        asyncio.run(side_by_side())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller run (a few minutes at most)")
    parser.add_argument("--only", choices=["ranking", "learned", "latency"], help="run one part")
    args = parser.parse_args()
    if args.only in (None, "ranking"):
        bench_ranking(args.quick)
    if args.only in (None, "learned"):
        bench_learned(args.quick)
    if args.only in (None, "latency"):
        bench_latency(args.quick)


if __name__ == "__main__":
    main()
