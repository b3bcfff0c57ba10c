"""The documentation's examples that start mpiexec jobs (tests/test_docs.py runs the rest).

The same runner as tests/test_docs.py (:func:`test_docs.run_examples`), on the pages
whose examples launch ``mpiexec`` (:func:`test_docs.launches_jobs`). By its name
this file runs with the other mpiexec files on one pytest worker (tests/conftest.py),
one job after another, while the other worker runs tests/test_docs.py without
waiting at the tests' mpiexec lock (in a whole run, those pages' tests waited 58 s
there).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_docs import PAGES, _page_id, launches_jobs, run_examples


@pytest.mark.mpi
@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", [p for p in PAGES if launches_jobs(p)], ids=_page_id)
def test_examples_with_jobs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run_examples(page, tmp_path, monkeypatch)
