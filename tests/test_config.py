"""Config: validation, TOML, environment, precedence."""

from __future__ import annotations

import pytest

import spbfs
from spbfs.config import Config, load_config


def test_defaults_and_replace():
    c = Config()
    assert (c.format, c.backend, c.direction) == ("csr", "auto", "auto")
    d = c.replace(format="dcsc", grid="2x3")
    assert d.format == "dcsc" and d.grid == (2, 3) and c.format == "csr"


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"format": "coo"}, "'format' must be one of 'csr', 'dcsc'; got 'coo'"),
        ({"backend": "cuda"}, "'backend' must be one of 'auto', 'numpy', 'numba', 'cupy'"),
        ({"direction": "up"}, "'direction' must be one of"),
        ({"index_dtype": "int16"}, "'index_dtype' must be one of"),
        ({"alpha": 0}, "'alpha' must be a positive number"),
        ({"beta": "x"}, "'beta' must be a positive number"),
        ({"grid": "2by2"}, "'grid' must be two positive integers"),
        ({"grid": (0, 2)}, "'grid' dimensions must be positive"),
        ({"threads": 0}, "'threads' must be a positive integer"),
        ({"output": "tree"}, "'output' must be one of"),
    ],
)
def test_bad_values_list_the_valid_ones(kw, match):
    with pytest.raises(ValueError, match=match):
        Config(**kw)


def test_toml_env_kwargs_precedence(tmp_path):
    f = tmp_path / "spbfs.toml"
    f.write_text('[spbfs]\nformat = "dcsc"\nalpha = 10\ndirection = "top-down"\n')
    env = {"SPBFS_DIRECTION": "bottom-up", "SPBFS_BETA": "30"}
    c = load_config(f, environ=env, alpha=None, threads=2)
    assert c.format == "dcsc"  # file
    assert c.alpha == 10.0  # file; a None keyword does not mask it
    assert c.direction == "bottom-up"  # environment beats the file
    assert c.beta == 30.0
    assert c.threads == 2  # keywords beat everything
    assert load_config(environ={"SPBFS_FORMAT": "dcsc"}).format == "dcsc"


def test_env_and_file_errors(tmp_path):
    with pytest.raises(ValueError, match="SPBFS_ALPHA must be a number"):
        load_config(environ={"SPBFS_ALPHA": "fast"})
    with pytest.raises(ValueError, match="'format' must be one of"):
        load_config(environ={"SPBFS_FORMAT": "coo"})
    f = tmp_path / "bad.toml"
    f.write_text("formt = 'csr'\n")
    with pytest.raises(ValueError, match=r"unknown config key.*'formt'.*valid keys"):
        Config.from_toml(f)
    g = tmp_path / "broken.toml"
    g.write_text("format = \n")
    with pytest.raises(ValueError, match=r"broken\.toml"):
        Config.from_toml(g)


def test_format_swapped_by_config_alone():
    from spbfs.generators import kronecker

    edges = kronecker(9, 8, seed=2)
    a = spbfs.Graph.from_edgelist(edges, config=Config(format="csr"))
    b = spbfs.Graph.from_edgelist(edges, config=Config(format="dcsc"))
    assert a.out_block.format == "csr" and b.out_block.format == "dcsc"
    ra, rb = spbfs.bfs(a, 3), spbfs.bfs(b, 3)
    assert (ra.parents == rb.parents).all()
    c = a.with_config(Config(format="dcsc"))
    assert c.out_block.format == "dcsc" and (spbfs.bfs(c, 3).parents == ra.parents).all()
