"""What `import perfmodel` and `perfmodel --help` load, the grammar that parses every
command without JAX, and the CLI's persistent compilation cache (the library never turns
it on)."""

import argparse
import ast
import os
from pathlib import Path
import subprocess
import sys

import jax
import pytest

import perfmodel
from perfmodel._cli import app, grammar
from perfmodel._cli.cache import cache_dir, enable_compilation_cache
from perfmodel._cli.grammar import vocabulary

ROOT = Path(__file__).resolve().parent.parent


def python(code: str, **env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment
    )


def test_import_perfmodel_and_help_do_not_import_jax():
    code = (
        "import sys, contextlib, io\n"
        "import perfmodel\n"
        "assert 'jax' not in sys.modules and 'numpy' not in sys.modules, 'import'\n"
        "from perfmodel._cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "assert 'fit' in out.getvalue() and 'sweep' in out.getvalue()\n"
        "assert 'jax' not in sys.modules and 'pandas' not in sys.modules, 'help'\n"
        "perfmodel.Config\n"
        "assert 'jax' in sys.modules\n"
    )
    result = python(code)
    assert result.returncode == 0, result.stderr


def test_public_names_resolve_and_match_the_type_checking_block():
    tree = ast.parse((ROOT / "perfmodel" / "__init__.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If))  # `if TYPE_CHECKING:`
    listed = {a.asname: node.module for node in block.body for a in node.names}
    assert {n: "." + m for n, m in listed.items()} == perfmodel._EXPORTS
    for name in perfmodel.__all__:
        assert getattr(perfmodel, name) is not None
    assert "recommend" in dir(perfmodel) and perfmodel.__version__


def test_every_command_parses_without_jax_and_names_a_function_that_exists():
    # `fit --help` and an argument error answer from the grammar alone (they took 2-3 s
    # when each command module, which imports JAX, registered its own arguments).
    code = (
        "import sys, contextlib, io\n"
        "from perfmodel._cli.app import build_parser, main\n"
        "for argv in (['fit', '--help'], ['sweep', '--help'], ['fit', 'x.csv', '--bogus']):\n"
        "    quiet = io.StringIO()\n"
        "    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):\n"
        "        try:\n"
        "            main(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        "build_parser().parse_args(['report', 'fit.json', '-o', 'r.html'])\n"
        "assert 'jax' not in sys.modules and 'pandas' not in sys.modules\n"
    )
    result = python(code)
    assert result.returncode == 0, result.stderr
    parser = app.build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for command, sub in subparsers.choices.items():
        handler = sub.get_default("run")
        assert isinstance(handler, grammar.Handler), command
        assert callable(handler.resolve()), command


def test_the_grammar_offers_what_the_library_has():
    from perfmodel import (
        _collective,
        _config,
        _fitting,
        _presets,
        _questions,
        _readers,
        _sweep,
        _terms,
    )
    from perfmodel._fitting.problem import DEFAULTS
    from perfmodel._readers.summary import QUANTITIES

    assert vocabulary.FAMILY_NAMES == tuple(_presets.FAMILIES)
    assert vocabulary.CRITERIA == _fitting.CRITERIA
    assert vocabulary.DEFAULT_CRITERION == _fitting.DEFAULT_CRITERION
    assert vocabulary.LOSSES == _fitting.LOSSES
    assert vocabulary.DEFAULT_STARTS == DEFAULTS.n_starts
    assert vocabulary.NEXT_QUANTITIES == _questions.QUANTITIES
    assert vocabulary.MAX_GPUS == _questions.MAX_GPUS
    assert vocabulary.OPS == _terms.OPS
    assert vocabulary.COLLECTIVE_FACTORS == _collective.FACTORS
    assert vocabulary.GPU_NAMES == tuple(_terms.GPUS)
    assert vocabulary.LAYOUT_FIELDS == _config.LAYOUT_FIELDS
    assert vocabulary.LOG_FORMATS == _readers.FORMATS
    assert vocabulary.WORK_UNITS == _readers.WORK_UNITS
    assert vocabulary.LOG_QUANTITIES == QUANTITIES
    assert vocabulary.SWEEP_OBJECTIVES == _sweep.OBJECTIVES
    assert vocabulary.PRECISIONS == _sweep.PRECISIONS
    assert vocabulary.DEFAULT_MAX_CONFIGS == _sweep.DEFAULT_MAX_CONFIGS


def test_the_cli_cache_is_a_user_folder_and_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.delenv("PERFMODEL_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "perfmodel"
    monkeypatch.setenv("PERFMODEL_NO_CACHE", "1")
    assert enable_compilation_cache() is None
    code = (
        "import jax\n"
        "from perfmodel._cli.cache import enable_compilation_cache\n"
        "print(enable_compilation_cache(), jax.config.jax_compilation_cache_dir)\n"
    )
    result = python(code, PERFMODEL_NO_CACHE="", PERFMODEL_CACHE_DIR=str(tmp_path / "c"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(tmp_path / "c" / "jax")] * 2
    assert (tmp_path / "c" / "jax").is_dir()


def test_the_library_leaves_jax_configuration_alone():
    # conftest sets only precision and promotion; no library call sets a cache folder.
    perfmodel.load_dataset("tf_dgx1_p100_vgg16_real")
    perfmodel.Config(gpus=8.0)
    assert jax.config.jax_compilation_cache_dir is None


@pytest.mark.slow  # a joint fit or a subprocess: seconds each, run with -m slow
def test_a_second_cli_call_reads_what_the_first_compiled(tmp_path):
    csv = tmp_path / "bench.csv"
    csv.write_text("gpus,time_s\n1,1.0\n2,0.53\n4,0.29\n8,0.18\n")
    fit = tmp_path / "fit.json"
    env = {"PERFMODEL_NO_CACHE": "", "PERFMODEL_CACHE_DIR": str(tmp_path / "cache")}
    code = "import sys; from perfmodel._cli import main; sys.exit(main(sys.argv[1:]))"
    run = [sys.executable, "-c", code]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    argv = ["fit", str(csv), "--model", "amdahl", "-o", str(fit), "--json"]
    assert subprocess.run([*run, *argv], env=environment, capture_output=True).returncode == 0
    assert os.listdir(tmp_path / "cache" / "jax")  # the fit's compiled functions were kept
    (drawn,) = os.listdir(tmp_path / "cache" / "ensembles")  # and the ensemble it drew
    argv = ["predict", str(fit), "--gpus", "1,8", "--interval", "0.9", "--json"]
    done = subprocess.run([*run, *argv], env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # predict found the fit's ensemble (the same key from the saved file), drew no other.
    assert os.listdir(tmp_path / "cache" / "ensembles") == [drawn]
