"""Megatron-LM logs carry the model's shape and recipe in their argument dump: a folder
of them fits the `hybrid` family without a CSV."""

import json

import numpy as np
import pytest

import perfmodel as pm
from perfmodel import InputError
from perfmodel._readers import read_log, read_runs

# Llama-style 8B (Llama 3 8B's shape) at two layouts; what each log's dump says.
SHAPE = dict(layers=32, hidden=4096, heads=32, query_groups=8, ffn_hidden=14336, seq_len=4096)
SHAPE |= dict(vocab=128256, gated_mlp=1.0, untied_embeddings=1.0, seq_parallel=1.0)
SHAPE |= dict(recompute=1.0, flash_attention=1.0, global_batch=128, microbatch_size=1)
LAYOUTS = [dict(gpus=8, tp=8, pp=1), dict(gpus=32, tp=4, pp=2)]
ITER = (
    " iteration {i:8d}/   10000 | consumed samples: {c:12d} | elapsed time per iteration"
    " (ms): {ms:.1f} | learning rate: 1.0E-04 | global batch size: {b:5d} | lm loss: 2.5 |"
)


def _log(layout, step_s, extra=()):
    dp = layout["gpus"] // (layout["tp"] * layout["pp"])
    dump = {
        "world_size": layout["gpus"],
        "tensor_model_parallel_size": layout["tp"],
        "pipeline_model_parallel_size": layout["pp"],
        "data_parallel_size": dp,
        "num_layers": SHAPE["layers"],
        "hidden_size": SHAPE["hidden"],
        "num_attention_heads": SHAPE["heads"],
        "group_query_attention": True,
        "num_query_groups": SHAPE["query_groups"],
        "ffn_hidden_size": SHAPE["ffn_hidden"],
        "swiglu": True,
        "untie_embeddings_and_output_weights": True,
        "sequence_parallel": True,
        "use_flash_attn": True,
        "recompute_granularity": "selective",
        "seq_length": SHAPE["seq_len"],
        "global_batch_size": SHAPE["global_batch"],
        "micro_batch_size": SHAPE["microbatch_size"],
        **dict(extra),
    }
    lines = ["------------------------ arguments ------------------------"]
    lines += [f"  {k} {'.' * (40 - len(k))} {v}" for k, v in sorted(dump.items())]
    lines += ["-------------------- end of arguments ---------------------"]
    lines += [f" > padded vocab (size: 128000) with 256 dummy tokens (new size: {SHAPE['vocab']})"]
    b = SHAPE["global_batch"]
    lines += [ITER.format(i=10 * k, c=10 * k * b, ms=1000 * step_s, b=b) for k in range(1, 9)]
    return "\n".join(lines) + "\n"


def test_the_dump_gives_the_shape_and_recipe(tmp_path):
    path = tmp_path / "run.log"
    path.write_text(_log(LAYOUTS[1], 2.0))
    (run,) = read_runs(path)
    want = {k: SHAPE[k] for k in ("layers", "hidden", "heads", "query_groups", "ffn_hidden")}
    want |= {k: SHAPE[k] for k in ("vocab", "gated_mlp", "untied_embeddings", "recompute")}
    assert {k: run.config[k] for k in want} == pytest.approx(want)
    assert run.config["tp"] == 4 and run.config["microbatches"] == 128 / 4
    # Without group_query_attention, Megatron-LM ignores num_query_groups: so does the reader.
    path.write_text(_log(LAYOUTS[1], 2.0, {"group_query_attention": False}))
    assert "query_groups" not in read_runs(path)[0].config


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"swiglu": "yes"}, r"run.log line \d+: swiglu: expected True or False, got 'yes'"),
        ({"recompute_granularity": "most"}, r"recompute_granularity: expected one of None"),
        ({"num_layers": "-3"}, r"num_layers: expected a positive number, got '-3'"),
    ],
)
def test_a_malformed_dump_is_refused_with_its_line(tmp_path, extra, message):
    path = tmp_path / "run.log"
    path.write_text(_log(LAYOUTS[0], 1.0, extra))
    with pytest.raises(InputError, match=message):
        read_log(path)


@pytest.mark.slow  # a hybrid fit compiles its loss and two layout sweeps: about a minute
def test_logs_made_at_known_efficiency_fit_it_back(tmp_path, capsys):
    from perfmodel._cli import main

    truth = dict(e_max=0.7, d0=200.0)
    model = pm.hybrid(gpu="A100-80GB", **truth)
    folder = tmp_path / "logs"
    folder.mkdir()
    for layout in LAYOUTS:
        config = pm.Config(**(SHAPE | layout), gpus_per_node=8.0)
        (folder / f"run_{layout['gpus']}.log").write_text(_log(layout, float(model(config))))
    assert (
        main(["fit", str(folder), "--model", "hybrid", "--json", "-o", str(tmp_path / "f.json")])
        == 0
    )
    found = {k: v["value"] for k, v in json.loads(capsys.readouterr().out)["parameters"].items()}
    assert found["compute.e_max"] == pytest.approx(truth["e_max"], rel=0.01)
    assert found["compute.d0"] == pytest.approx(truth["d0"], rel=0.05)
    assert np.isfinite(list(found.values())).all()
