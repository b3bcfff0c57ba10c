"""The documentation: every example on every page runs, and the site builds with --strict.

Code blocks in ``docs/**/*.md`` are run page by page, in order, in a temporary working
directory shared by the blocks of one page:

``python``
    executed in one namespace per page (later blocks see earlier names);
``bash``
    run with ``bash -euo pipefail``, with this interpreter's ``bin/`` first on the PATH
    (``spbfs``, ``python`` and ``mpiexec`` are the project's). ``-e`` lets a failure
    pass unseen in ``a && b`` (unless last), in ``$(...)`` inside an argument and
    after ``||``, so these three commands are shell functions (from ``$BASH_ENV``)
    that log every non-zero exit with its line: a failure fails the test unless it
    happened in the condition of an ``if``/``elif``/``while``/``until`` or after
    ``!`` (the block checks it there itself, e.g. that a bad option is an error);
``toml``
    loaded as a configuration with :func:`spbfs.load_config` (unknown keys and bad
    values fail);
``text``
    output or pseudo-code: not run.

A block may be preceded by one directive comment:

``<!-- docs-test: skip REASON -->``
    not run (a reason is required; e.g. commands that install packages);
``<!-- docs-test: mpiexec -n N -->``
    a ``python`` block run as a script under ``mpiexec -n N`` (skipped, with the
    rest of the page, only when no ``mpiexec`` exists).

Any other language is an error, so no example can escape the test by accident.
The site build runs ``docs/figures.py`` and ``mkdocs build --strict`` on a temporary
copy of ``docs/`` and ``mkdocs.yml``; it is skipped only when mkdocs is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import pytest
from mpi_launch import one_job_at_a_time

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# The README is a page too: its Python example must run as written.
PAGES = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]
BENCHMARKS = DOCS / "benchmarks.md"
RUN_LANGS = ("python", "bash", "toml")
TEXT_LANGS = ("text",)
BLOCK_TIMEOUT_S = 300

_FENCE = re.compile(
    r"^(?P<fence>```+)(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(?P<what>.*?)\s*-->\s*$")


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str
    directive: str | None

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a page, each with the directive comment right above it."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        d = _DIRECTIVE.search(before)
        out.append(Block(page, text.count("\n", 0, m.start()) + 1, m["lang"], m["body"],
                         d["what"] if d else None))
    return out


def _mpiexec() -> str | None:
    return shutil.which("mpiexec") or shutil.which(
        "mpiexec", path=str(Path(sys.executable).parent)
    )


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("MPLBACKEND", "Agg")
    return env


def _page_id(page: Path) -> str:
    return str(page.relative_to(DOCS if page.is_relative_to(DOCS) else ROOT))


# ----------------------------------------------------------------------------- structure


def test_pages_exist():
    names = {_page_id(p) for p in PAGES}
    for required in ("index.md", "getting-started.md", "cli.md", "benchmarks.md",
                     "concepts/semirings.md", "concepts/spmsv.md", "concepts/grid.md",
                     "concepts/formats.md", "concepts/direction.md",
                     "how-to/load-graph.md", "how-to/mpi.md", "how-to/gpu.md",
                     "how-to/choose-format.md", "how-to/validate.md",
                     "api/spbfs.md", "api/semirings.md", "api/mpi.md"):
        assert required in names


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_block_is_accounted_for(page: Path):
    for b in blocks(page):
        assert b.lang in RUN_LANGS + TEXT_LANGS, (
            f"{b.where()}: code block language {b.lang!r} is neither run ({RUN_LANGS}) "
            f"nor output ({TEXT_LANGS})"
        )
        if b.directive is not None:
            skip = re.fullmatch(r"skip\s+(\S.*)", b.directive)
            mpi = re.fullmatch(r"mpiexec -n \d+", b.directive)
            assert skip or (mpi and b.lang == "python"), (
                f"{b.where()}: bad directive {b.directive!r} (use 'skip REASON', or "
                "'mpiexec -n N' on a python block)"
            )


def test_most_examples_run():
    """Skips are for commands that install or run for minutes; they must stay few.

    The benchmarks page is the exception: each of its tables shows the command that
    printed it, and those run for minutes (``test_every_benchmark_table_has_its_command``).
    """
    all_blocks = [b for p in PAGES for b in blocks(p) if b.lang in RUN_LANGS]
    skipped = [b for b in all_blocks if b.directive and b.directive.startswith("skip")
               and b.page != BENCHMARKS]
    assert len(all_blocks) >= 30
    # Seven in docs/, two in the README (its install commands and its CLI summary).
    assert len(skipped) <= 10, [b.where() for b in skipped]


def test_every_benchmark_table_has_its_command():
    """On docs/benchmarks.md a table follows, in its own section, the command that prints it."""
    text = BENCHMARKS.read_text(encoding="utf-8")
    assert len(text.encode()) < 60_000, "benchmarks.md is a page to read, not a log"
    fences = {b.line: b for b in blocks(BENCHMARKS)}
    section, command, fence, tables = None, False, None, 0
    for k, line in enumerate(text.splitlines(), start=1):
        if fence is not None:
            fence = None if line.startswith(fence) else fence
            continue
        if line.startswith("```"):
            fence = re.match(r"`+", line)[0]
            b = fences[k]
            command |= b.lang == "bash"
            assert b.lang != "bash" or b.directive is None or "benchmarks/" in b.body \
                or "bench" in b.body or "pytest" in b.body or "python -" in b.body, b.where()
        elif line.startswith("## ") or line.startswith("### "):
            section, command = line, False
        elif line.startswith("|") and section is not None and not command:
            raise AssertionError(f"docs/benchmarks.md:{k}: a table in {section!r} "
                                 "without the command that prints it before it")
        elif line.startswith("|---") or line.startswith("| ---"):
            tables += 1
    assert tables >= 20


_HISTORY = re.compile(r"\bsessions?\b|\bissues? \d|\bseed 0\d\d\b", re.IGNORECASE)


@pytest.mark.parametrize("page", [*PAGES, *sorted((ROOT / "notebooks").glob("*.ipynb"))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_speak_of_the_project_only(page: Path):
    """No page tells how the project was made; papers are cited by authors and title."""
    for k, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        assert not _HISTORY.search(line), f"{page.relative_to(ROOT)}:{k}: {line.strip()}"


def test_cli_reference_lists_every_option():
    """docs/cli.md names every option of every ``spbfs`` sub-command."""
    from spbfs.cli import _parser

    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    sub = next(a for a in _parser()._actions if a.dest == "command")
    for name, parser in sub.choices.items():
        assert f"## `spbfs {name}`" in text
        for action in parser._actions:
            for opt in action.option_strings:
                if opt not in ("-h", "--help"):
                    assert f"`{opt}`" in text, f"cli.md does not document spbfs {name} {opt}"


# ----------------------------------------------------------------------------- examples


def _run_python(b: Block, ns: dict, cwd: Path) -> None:
    code = compile(b.body, b.where(), "exec")
    old = Path.cwd()
    os.chdir(cwd)
    try:
        exec(code, ns)
    except Exception as exc:
        raise AssertionError(f"{b.where()}: python example failed: {exc!r}") from exc
    finally:
        os.chdir(old)


def _run_process(b: Block, cmd: list[str], cwd: Path,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, cwd=cwd, env=env or _env(), capture_output=True, text=True,
                       timeout=BLOCK_TIMEOUT_S)
    assert p.returncode == 0, (
        f"{b.where()}: {b.lang} example exited {p.returncode}\n--- stdout\n{p.stdout[-3000:]}"
        f"\n--- stderr\n{p.stderr[-3000:]}"
    )
    return p


#: Sourced by the block's bash ($BASH_ENV): the project's commands log their failures.
_BASH_PRELUDE = """\
_docs_run() {
    local rc=0
    command "$@" || rc=$?
    if [ "$rc" -ne 0 ]; then
        printf '%s %s %s\\n' "${BASH_LINENO[1]}" "$rc" "$1" >> "$DOCS_TEST_FAILURES"
    fi
    return "$rc"
}
spbfs() { _docs_run spbfs "$@"; }
python() { _docs_run python "$@"; }
mpiexec() { _docs_run mpiexec "$@"; }
export -f _docs_run spbfs python mpiexec
"""
_CHECKED = re.compile(r"\s*(if|elif|while|until|!)\s")


def _statement_start(lines: list[str], k: int) -> str:
    """The line that starts the statement holding line ``k`` (0-based; ``\\`` continues)."""
    while k > 0 and lines[k - 1].rstrip().endswith("\\"):
        k -= 1
    return lines[k]


def _run_bash(b: Block, cwd: Path) -> None:
    """Run a bash block; fail on its exit status and on any unchecked failing command."""
    log = cwd / f".docs_failures_{b.line}"
    prelude = cwd / ".docs_prelude.sh"
    prelude.write_text(_BASH_PRELUDE, encoding="utf-8")
    log.write_text("", encoding="utf-8")
    env = {**_env(), "BASH_ENV": str(prelude), "DOCS_TEST_FAILURES": str(log)}
    p = _run_process(b, ["bash", "-euo", "pipefail", "-c", b.body], cwd, env)
    lines = b.body.splitlines()
    unchecked = []
    for entry in log.read_text(encoding="utf-8").splitlines():
        line, rc, cmd = entry.split(" ", 2)
        k = int(line) - 1
        text = lines[k] if 0 <= k < len(lines) else "?"
        if not (0 <= k < len(lines) and _CHECKED.match(_statement_start(lines, k))):
            unchecked.append(f"line {k + 1} ({text.strip()!r}): {cmd} exited {rc}")
    assert not unchecked, (
        f"{b.where()}: a command failed and the block went on: " + "; ".join(unchecked)
        + f"\n--- stdout\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"
    )


def launches_jobs(page: Path) -> bool:
    """Whether a page's examples start mpiexec jobs (tests/test_docs_mpi.py runs those pages).

    Such a page's test waits at the tests' mpiexec lock (:mod:`mpi_launch`) while the
    mpiexec files' jobs run; run with them on their worker, it waits for none.
    """
    return any(b.lang in RUN_LANGS and not (b.directive or "").startswith("skip")
               and ((b.directive or "").startswith("mpiexec") or "mpiexec" in b.body)
               for b in blocks(page))


@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", [p for p in PAGES if not launches_jobs(p)], ids=_page_id)
def test_examples(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run_examples(page, tmp_path, monkeypatch)


def run_examples(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a page's examples in order (the module docstring says how each kind runs)."""
    import spbfs

    runnable = [b for b in blocks(page) if b.lang in RUN_LANGS]
    if not runnable:
        pytest.skip("no code examples on this page")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns: dict = {"__name__": "__docs__"}
    ran = 0
    for b in runnable:
        if b.directive and b.directive.startswith("skip"):
            continue
        if b.directive and b.directive.startswith("mpiexec"):
            exe = _mpiexec()
            if exe is None:
                pytest.skip("mpiexec not found")
            script = tmp_path / f"example_{b.line}.py"
            script.write_text(b.body, encoding="utf-8")
            nproc = b.directive.split()[-1]
            with one_job_at_a_time():  # none of the other worker's jobs beside it (mpi_launch)
                _run_process(b, [exe, "-n", nproc, sys.executable, str(script)], tmp_path)
        elif b.lang == "python":
            _run_python(b, ns, tmp_path)
        elif b.lang == "bash":
            if "mpiexec" in b.body and _mpiexec() is None:
                pytest.skip("mpiexec not found")
            with one_job_at_a_time() if "mpiexec" in b.body else nullcontext():
                _run_bash(b, tmp_path)
        elif b.lang == "toml":
            path = tmp_path / f"example_{b.line}.toml"
            path.write_text(b.body, encoding="utf-8")
            try:
                spbfs.load_config(path, environ={})
            except Exception as exc:
                raise AssertionError(f"{b.where()}: not a valid config: {exc}") from exc
        ran += 1
    assert ran or all(b.directive for b in runnable)


@pytest.mark.parametrize("body", [
    # -e does not stop at a failure before && (the old cli.md --plot block).
    'python -c "raise SystemExit(1)" && test -s nothing.png\necho went on\n',
    # nor in a command substitution inside an argument, nor before ||.
    'echo "$(python -c "raise SystemExit(2)")"\n',
    'spbfs no-such-command || true\n',
    # a continued line is one statement; its first line decides.
    'python -c "raise SystemExit(1)" \\\n    && true\necho went on\n',
])
def test_a_failing_command_fails_its_block(body: str, tmp_path: Path):
    b = Block(DOCS / "cli.md", 1, "bash", body, None)
    with pytest.raises(AssertionError, match="exited"):
        _run_bash(b, tmp_path)


def test_a_failure_the_block_checks_passes(tmp_path: Path):
    body = ('if python -c "raise SystemExit(3)" 2> err.txt; then\n    exit 1\nfi\n'
            '! spbfs no-such-command 2> err2.txt\ngrep -q "invalid choice" err2.txt\n'
            'python -c "print(1)" && echo ok\n')
    _run_bash(Block(DOCS / "cli.md", 1, "bash", body, None), tmp_path)


# ----------------------------------------------------------------------------- the site


@pytest.mark.timeout(600)
def test_site_builds_strict(tmp_path: Path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("material")
    pytest.importorskip("matplotlib")
    copy = tmp_path / "project"
    shutil.copytree(DOCS, copy / "docs", ignore=shutil.ignore_patterns("figures", "__pycache__"))
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "paths: [.]" in config
    (copy / "mkdocs.yml").write_text(config.replace("paths: [.]", f"paths: [{ROOT}]"),
                                     encoding="utf-8")
    env = _env()
    fig = subprocess.run([sys.executable, str(copy / "docs" / "figures.py"), "--out",
                          str(copy / "docs" / "figures")], env=env, capture_output=True,
                         text=True, timeout=300)
    assert fig.returncode == 0, fig.stderr[-3000:]
    site = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(copy / "mkdocs.yml"),
         "-d", str(site)],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stderr[-5000:]
    assert (site / "index.html").is_file()
    for page in ("concepts/spmsv", "how-to/mpi", "cli", "api/spbfs", "api/semirings"):
        assert (site / page / "index.html").is_file(), page
    html = (site / "api" / "spbfs" / "index.html").read_text(encoding="utf-8")
    assert "Breadth-first search from" in html  # a docstring made it into the page
    for name in ("bench", "spmsv", "grid", "formats", "direction"):
        assert (site / "figures" / f"{name}.png").is_file()
