"""Real human fixes of other projects, to check what the development set tunes: mined from PyPI releases.

The development set (``../shared/humanfix/``) holds five projects' histories; the
learned-fixes issue's targets are checked on projects kept apart. This builds a set of
that kind from projects outside the five: for each, up to ``--releases`` source
distributions spread over its history are fetched from PyPI (the package registry),
their ``.py`` files committed in upload order into a git repository (one commit per
release, dated by its upload), and the team's miner (``mine_fixes.py``) reads those
histories as it read the development set's. A release's diff holds many commits'
changes, so its events are coarser (a fix may come with its release's reformatting);
they are still fixes people made.

A developer's measurement, never part of the tests or of CI: it downloads. The events
hold third-party code: keep them out of the repository (the default output is under
``/tmp``). Then replay them with ``bench_humanfix.py --events OUT/events.jsonl.gz``
or ``humanfix_offline.py --events OUT/events.jsonl.gz``.

Usage: ``python bench/humanfix_sdists.py [--projects requests,jinja2,...] [--releases 30] [--out DIR]``
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

HUMANFIX = Path(__file__).resolve().parent.parent.parent / "shared" / "humanfix"
PROJECTS = "requests,jinja2,flask,pyflakes,bottle,sqlparse,markdown,urllib3"
"""Pure-Python projects with long release histories, none of the development set's five."""
INDEX = "https://pypi.org/pypi/{}/json"
_FINAL = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_ARCHIVE = re.compile(r"\.(?:tar\.gz|tgz|tar\.bz2|zip)$")


def releases(project: str, count: int) -> list[dict[str, str]]:
    """Up to ``count`` final releases with a source distribution, spread evenly over the project's history."""
    url = INDEX.format(project)
    with urllib.request.urlopen(url, timeout=60) as answer:
        data = json.load(answer)
    found = []
    for version, files in data["releases"].items():
        sdists = [f for f in files if f["packagetype"] == "sdist" and _ARCHIVE.search(f["filename"])]
        if _FINAL.fullmatch(version) and sdists:
            sdist = sdists[0]
            found.append({**sdist, "version": version, "url": urllib.parse.urljoin(url, sdist["url"])})
    found.sort(key=lambda r: r["upload_time"])
    if len(found) <= count:
        return found
    return [found[round(i * (len(found) - 1) / (count - 1))] for i in range(count)]


def history(project: str, count: int, out: Path) -> Path:
    """A bare git repository of ``project``'s releases' ``.py`` files, one commit per release."""
    work, bare = out / "work" / project, out / "bare" / f"{project}.git"
    downloads = out / "downloads" / project
    for path in (work, bare):
        shutil.rmtree(path, ignore_errors=True)
    downloads.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    for release in releases(project, count):
        archive = downloads / release["filename"]
        if not archive.exists():
            with urllib.request.urlopen(release["url"], timeout=120) as answer:
                archive.write_bytes(answer.read())
        for path in work.iterdir():
            if path.name != ".git":
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        with tempfile.TemporaryDirectory() as tmp:
            top = _unpack(archive, Path(tmp))
            for source in top.rglob("*.py"):
                if source.is_file() and not source.is_symlink():
                    target = work / source.relative_to(top)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target)
        when = datetime.datetime.fromisoformat(release["upload_time"]).replace(tzinfo=datetime.UTC)
        stamp = f"{int(when.timestamp())} +0000"
        env = {
            **os.environ,
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_DATE": stamp,
            "GIT_AUTHOR_NAME": "release",
            "GIT_AUTHOR_EMAIL": "release@localhost",
            "GIT_COMMITTER_NAME": "release",
            "GIT_COMMITTER_EMAIL": "release@localhost",
        }
        subprocess.run(["git", "-C", str(work), "add", "-A"], check=True)
        message = f"{project} {release['version']}"
        subprocess.run(["git", "-C", str(work), "commit", "-q", "--allow-empty", "-m", message], check=True, env=env)
        print(f"  {message}", flush=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return bare


def _unpack(archive: Path, into: Path) -> Path:
    """Unpack a source distribution (never its links or absolute paths); its one top folder."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for member in z.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    raise ValueError(f"unsafe path in {archive.name}")
            z.extractall(into)
    else:
        with tarfile.open(archive) as t:
            t.extractall(into, filter="data")
    folders = [p for p in into.iterdir() if p.is_dir()]
    return folders[0] if len(folders) == 1 else into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--projects", default=PROJECTS, help=f"comma-separated PyPI names (default {PROJECTS})")
    parser.add_argument("--releases", type=int, default=30, help="releases per project (default 30)")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "humanfix-sdists")
    parser.add_argument("--humanfix", type=Path, default=HUMANFIX, help="the folder with mine_fixes.py")
    parser.add_argument("--ruff", default=shutil.which("ruff") or "ruff", help="ruff 0.17.6, as the dev set's")
    args = parser.parse_args()
    repos = []
    for project in args.projects.split(","):
        print(f"{project}:", flush=True)
        repos += ["--repo", f"{project}={history(project, args.releases, args.out)}"]
    mined = args.out / "mined"
    miner = [sys.executable, str(args.humanfix / "mine_fixes.py"), *repos, "--out", str(mined), "--ruff", args.ruff]
    subprocess.run(miner, check=True)
    with open(mined / "events.jsonl", "rb") as plain, gzip.open(mined / "events.jsonl.gz", "wb") as packed:
        shutil.copyfileobj(plain, packed)
    print(f"events: {mined / 'events.jsonl.gz'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
