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


def test_defaults_are_what_their_check_leaves():
    """A field holding its default object is not checked again: each default must be valid
    and already in the form its check gives (a float alpha, a stripped wait, ...)."""
    from dataclasses import fields

    from spbfs.config import _check

    for f in fields(Config):
        checked = _check(f.name, f.default)
        assert checked == f.default and type(checked) is type(f.default), f.name
    # A value other than the default object is checked and normalized.
    assert Config(alpha=3).alpha == 3.0 and type(Config(alpha=3).alpha) is float
    assert Config(wait=" busy ").wait == "busy"


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


def test_a_config_per_search_computes_the_degrees_once():
    """bfs(g, s, config=...) searches a re-stored g (same blocks): the degrees one such
    search computes serve g and every later one, whichever computed them first."""
    from spbfs.generators import kronecker

    edges = kronecker(9, 8, seed=2)
    g = spbfs.Graph.from_edgelist(edges, directed=True, config=Config(format="dcsc"))
    first = g.with_config(Config(format="dcsc", threads=1))
    out, inn = first.out_degree, first.in_degree
    assert out is not inn and int(out.sum()) == int(inn.sum()) == g.out_block.nnz
    again = g.with_config(Config(format="dcsc", threads=2))
    assert again.out_degree is out and again.in_degree is inn
    assert g.out_degree is out and g.in_degree is inn
    r = spbfs.bfs(g, 3, config=Config(format="dcsc", threads=1))
    assert g.out_degree is out
    assert (r.parents == spbfs.bfs(g, 3).parents).all()


# --------------------------------------------------------------------------- every SPBFS_* setting

# Each key, a value other than its default as the environment spells it, as TOML
# writes it, and the value the Config holds.
NEW_KEYS = [
    ("wait", "SPBFS_WAIT", "busy", '"busy"', "busy"),
    ("wait", "SPBFS_WAIT", "1e-5:1e-3:2e-5:1e-3", '"1e-5:1e-3:2e-5:1e-3"', "1e-5:1e-3:2e-5:1e-3"),
    ("debug", "SPBFS_DEBUG", "1", "true", True),
    ("cuda_kernels", "SPBFS_CUDA_KERNELS", "off", "false", False),
    ("cuda_fused", "SPBFS_CUDA_FUSED", "No", "false", False),
]


@pytest.mark.parametrize(("key", "var", "env", "toml", "value"), NEW_KEYS)
def test_new_keys_from_env_toml_and_keywords(tmp_path, key, var, env, toml, value):
    assert getattr(Config(), key) != value
    assert getattr(load_config(environ={var: env}), key) == value
    f = tmp_path / "c.toml"
    f.write_text(f"[spbfs]\n{key} = {toml}\n")
    assert getattr(load_config(f, environ={}), key) == value
    assert getattr(Config.from_toml(f), key) == value
    assert getattr(load_config(environ={}, **{key: value}), key) == value
    assert getattr(Config(**{key: value}), key) == value
    # Precedence as for the other keys: keyword over environment over file.
    default = getattr(Config(), key)
    assert getattr(load_config(f, environ={var: env}, **{key: default}), key) == default


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"wait": "fast"}, r"config 'wait' must be 'auto', 'busy' or "
                           r"'spin:yield:min_sleep:max_sleep' .*; got 'fast'"),
        ({"wait": "1:2:3"}, r"'wait' must be .*got '1:2:3'"),
        ({"wait": "0:0:1e-3:1e-4"}, r"min_sleep <= max_sleep"),
        ({"wait": "0:-1:0:0"}, r"seconds >= 0"),
        ({"wait": 3}, r"'wait' must be"),
        ({"debug": "yes"}, r"config 'debug' must be true or false; got 'yes'"),
        ({"cuda_kernels": 0}, r"config 'cuda_kernels' must be true or false; got 0"),
        ({"cuda_fused": None}, r"config 'cuda_fused' must be true or false; got None"),
    ],
)
def test_new_keys_bad_values(kw, match):
    with pytest.raises(ValueError, match=match):
        Config(**kw)


@pytest.mark.parametrize(
    ("env", "match"),
    [
        ({"SPBFS_WAIT": "fast"}, r"environment SPBFS_WAIT: config 'wait' must be 'auto', 'busy'"),
        ({"SPBFS_WAIT": ""}, r"environment SPBFS_WAIT: config 'wait' must be .*got ''"),
        ({"SPBFS_DEBUG": "maybe"}, r"environment SPBFS_DEBUG must be one of '1', 'true', 'yes', "
                                   r"'on', '0', 'false', 'no', 'off'; got 'maybe'"),
        ({"SPBFS_CUDA_KERNELS": "2"}, r"environment SPBFS_CUDA_KERNELS must be one of .*got '2'"),
        ({"SPBFS_FORMAT": "coo"}, r"environment SPBFS_FORMAT: config 'format' must be one of"),
    ],
)
def test_bad_env_values_name_the_variable(env, match):
    with pytest.raises(ValueError, match=match):
        load_config(environ=env)


def test_unknown_spbfs_variable_is_an_error():
    with pytest.raises(ValueError) as err:
        load_config(environ={"SPBFS_FORAMT": "dcsc"})
    msg = str(err.value)
    assert msg.startswith("unknown spbfs environment variable SPBFS_FORAMT "
                          "(did you mean SPBFS_FORMAT?); valid ones: SPBFS_ALPHA, ")
    for var in ("SPBFS_FORMAT", "SPBFS_WAIT", "SPBFS_DEBUG", "SPBFS_CUDA_KERNELS",
                "SPBFS_CUDA_FUSED", "SPBFS_CONFIG"):
        assert var in msg
    with pytest.raises(ValueError, match=r"variables SPBFS_NOPE, SPBFS_ZZZ; valid ones"):
        load_config(environ={"SPBFS_ZZZ": "1", "SPBFS_NOPE": "1", "SPBFS_FORMAT": "dcsc"})
    # Only the prefix counts; the TOML path and other programs' variables are fine.
    assert load_config(environ={"SPBFSFORMAT": "x", "XSPBFS_A": "1"}) == Config()
    # Checked when the environment is read, not when a Config is built from keywords.
    assert Config(format="dcsc").format == "dcsc"


def test_config_path_variable(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('wait = "busy"\n')
    assert load_config(environ={"SPBFS_CONFIG": str(f)}).wait == "busy"


def test_old_wait_variable_still_read():
    with pytest.warns(DeprecationWarning, match="SPBFS_DIST_WAIT is deprecated; set SPBFS_WAIT"):
        assert load_config(environ={"SPBFS_DIST_WAIT": "busy"}).wait == "busy"
    with pytest.warns(DeprecationWarning), \
            pytest.raises(ValueError, match=r"environment SPBFS_DIST_WAIT: config 'wait'"):
        load_config(environ={"SPBFS_DIST_WAIT": "fast"})
    # The new name wins; an empty old one meant "the default", as it did.
    env = {"SPBFS_DIST_WAIT": "busy", "SPBFS_WAIT": "auto"}
    assert load_config(environ=env).wait == "auto"
    assert load_config(environ={"SPBFS_DIST_WAIT": " "}).wait == "auto"


def test_wait_policy_comes_from_the_config():
    from spbfs.mpi.comm import WaitPolicy

    assert WaitPolicy.from_config(Config()) == WaitPolicy()
    assert WaitPolicy.from_config(Config(wait="busy")).busy
    p = WaitPolicy.from_config(Config(wait="1e-5:1e-3:2e-5:1e-3"))
    assert (p.spin, p.yield_, p.min_sleep, p.max_sleep, p.busy) == (1e-5, 1e-3, 2e-5, 1e-3,
                                                                     False)
    assert WaitPolicy.from_env({"SPBFS_WAIT": "busy"}).busy


def test_cuda_switches_come_from_the_config():
    import spbfs.kernels.bfs_cuda as sc

    # Disabled kernels are never built (so this needs no GPU).
    assert sc.make_engine(None, None, None, None, Config(cuda_kernels=False)) is None


@pytest.mark.parametrize("content, match", [
    (b"spbfs = 3\n", r"bad\.toml: 'spbfs' must be a table of settings \(\[spbfs\]\), got int 3"),
    (b"\xff\xfe\x00binary", r"bad\.toml: not UTF-8 text \(byte 0\)"),
    (b"format = 3\n", r"bad\.toml: config 'format' must be one of 'csr', 'dcsc'; got 3"),
])
def test_bad_toml_files_are_value_errors_naming_the_file(tmp_path, content, match):
    f = tmp_path / "bad.toml"
    f.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        Config.from_toml(f)
    with pytest.raises(ValueError, match=match):
        load_config(environ={"SPBFS_CONFIG": str(f)})


def test_config_as_a_mapping():
    g = spbfs.Graph.from_edges([0, 1, 2], [1, 2, 3], config={"format": "dcsc"})
    assert g.config.format == "dcsc" and g.out_block.format == "dcsc"
    r = spbfs.bfs(g, 0, config={"format": "dcsc", "direction": "top-down"})
    assert r.levels.tolist() == [0, 1, 2, 3]
    assert r.config.direction == "top-down"
    with pytest.raises(ValueError, match=r"config: unknown config key\(s\) 'fromat'; "
                                         r"valid keys: alpha, "):
        spbfs.bfs(g, 0, config={"fromat": "dcsc"})
    with pytest.raises(ValueError, match="config 'format' must be one of 'csr', 'dcsc'"):
        spbfs.Graph.from_edges([0], [1], config={"format": "coo"})
    with pytest.raises(TypeError, match=r"config must be a spbfs\.Config or a mapping of "
                                        "settings, got str"):
        spbfs.bfs(g, 0, config="dcsc")


@pytest.fixture
def fresh_default():
    """Read the environment again before and after the test (the default is cached)."""
    spbfs.config.default_config.cache_clear()
    yield spbfs.config.default_config
    spbfs.config.default_config.cache_clear()


def test_python_api_default_honours_the_environment(monkeypatch, fresh_default):
    monkeypatch.setenv("SPBFS_FORMAT", "dcsc")
    monkeypatch.setenv("SPBFS_DIRECTION", "top-down")
    g = spbfs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    assert g.config.format == "dcsc"
    assert spbfs.as_graph(([0, 1], [1, 2])).config.format == "dcsc"
    # keyword (a mapping's key) > environment > default
    assert spbfs.Graph.from_edges([0, 1], [1, 2], config={"format": "csr"}).config == \
        spbfs.Config(format="csr", direction="top-down")
    # An explicit Config is what it says.
    assert spbfs.Graph.from_edges([0, 1], [1, 2], config=spbfs.Config()).config.format == "csr"
    import scipy.sparse as sp

    a = sp.csr_matrix(([1, 1], ([0, 1], [1, 2])), shape=(3, 3))
    assert spbfs.bfs(a, 0, cache=False).config.direction == "top-down"


def test_python_api_refuses_a_misspelt_variable(monkeypatch, fresh_default):
    monkeypatch.setenv("SPBFS_FORAMT", "dcsc")
    with pytest.raises(ValueError, match=r"unknown spbfs environment variable SPBFS_FORAMT "
                                         r"\(did you mean SPBFS_FORMAT\?\); valid ones: "):
        spbfs.Graph.from_edges([0, 1], [1, 2])
    monkeypatch.delenv("SPBFS_FORAMT")
    assert spbfs.Graph.from_edges([0, 1], [1, 2]).config == spbfs.Config()


def test_python_api_default_reads_the_config_file(tmp_path, monkeypatch, fresh_default):
    f = tmp_path / "c.toml"
    f.write_text('[spbfs]\nformat = "dcsc"\nalpha = 9\n')
    monkeypatch.setenv("SPBFS_CONFIG", str(f))
    monkeypatch.setenv("SPBFS_ALPHA", "7")
    cfg = spbfs.Graph.from_edges([0, 1], [1, 2]).config
    assert (cfg.format, cfg.alpha) == ("dcsc", 7.0)  # environment > file > default
