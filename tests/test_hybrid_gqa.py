"""Grouped-query attention, gated MLPs (SwiGLU), the MLP width and untied embeddings in
the `hybrid` family, against closed forms and published parameter counts."""

import equinox as eqx
import jax.numpy as jnp
import pytest

import perfmodel as pm
from perfmodel._terms.hybrid.efficiency import Device, gemm_time, layer_gemm_times
from perfmodel._terms.hybrid.kernels import layer_elementwise_bytes
from perfmodel._terms.hybrid.memory import activation_bytes_per_layer

GIB = 2.0**30
# Llama 2 (Touvron et al. 2023, Table 1 and the released configs) and Llama 3 (Dubey et
# al. 2024, Table 3): layers, hidden, heads, key/value heads, MLP width, vocabulary,
# parameters as counted in the released checkpoints.
LLAMA = {
    "llama2-7b": (32, 4096, 32, 32, 11008, 32000, 6_738_415_616),
    "llama2-70b": (80, 8192, 64, 8, 28672, 32000, 68_976_648_192),
    "llama3-8b": (32, 4096, 32, 8, 14336, 128256, 8_030_261_248),
}


def _llama(name, **fields):
    L, h, a, g, f, V, _ = LLAMA[name]
    shape = dict(layers=L, hidden=h, heads=a, query_groups=g, ffn_hidden=f, vocab=V)
    shape |= dict(gated_mlp=1.0, untied_embeddings=1.0, seq_len=4096.0)
    return pm.Config(**({"gpus": 8.0, "global_batch": 8.0} | shape | fields))


@pytest.mark.parametrize("name", sorted(LLAMA))
def test_parameters_match_the_released_llama_checkpoints(name):
    # The model counts biases, LayerNorm shifts and learned positions (s·h: 0.25% of the
    # 7B), which Llama has not (RMSNorm, RoPE): within 0.3% of the released count.
    published = LLAMA[name][-1]
    assert float(pm.model_parameters(_llama(name))) == pytest.approx(published, rel=3e-3)


def test_layer_parameters_by_hand():
    L, h, a, g, f, V, _ = LLAMA["llama2-70b"]
    config = _llama("llama2-70b")
    qkv = h + 2 * g * h / a  # 8 key/value heads of 128 channels: 10240
    assert qkv == 10240
    by_hand = (h + 1) * (qkv + 2 * f) + (f + 1) * h + (h + 1) * h + 4 * h
    total = L * by_hand + 2 * V * h + 4096 * h
    assert float(pm.model_parameters(config)) == pytest.approx(total, rel=1e-12)
    tied = eqx.tree_at(lambda c: c.untied_embeddings, config, jnp.asarray(0.0))
    assert float(pm.model_parameters(config) - pm.model_parameters(tied)) == V * h


def test_gpt_fields_at_zero_are_the_gpt_layer():
    gpt = dict(gpus=8.0, layers=24, hidden=2048, heads=16, seq_len=2048, vocab=51200)
    explicit = pm.Config(**gpt, query_groups=16, ffn_hidden=4 * 2048)
    assert float(pm.model_parameters(pm.Config(**gpt))) == float(pm.model_parameters(explicit))
    assert float(pm.iteration_flops(pm.Config(**gpt))) == float(pm.iteration_flops(explicit))


def test_iteration_flops_are_six_per_weight_and_token_plus_attention():
    # Without recomputation: forward + backward = 6 FLOPs per GEMM weight and token, plus
    # 12·s²·h per layer and sample for QKᵀ and scores·V of every query head.
    L, h, a, g, f, V, _ = LLAMA["llama3-8b"]
    config = _llama("llama3-8b")
    B, s = 8.0, 4096.0
    weights = L * (h * (h + 2 * g * h / a) + h * h + h * 2 * f + f * h) + V * h
    expected = 6 * B * s * weights + 12 * B * L * s * s * h
    assert float(pm.iteration_flops(config)) == pytest.approx(expected, rel=1e-12)


def test_gemm_times_use_the_grouped_and_gated_widths():
    config = _llama("llama2-70b", tp=8.0, microbatch_size=1.0)
    device = Device(*(jnp.asarray(x) for x in (989e12, 3.0e12, 0.8, 300.0)))
    M, h, f, t = 4096.0, 8192.0, 28672.0, 8.0
    expected = (
        gemm_time(M, 10240 / t, h, device)
        + gemm_time(M, h, h / t, device)
        + gemm_time(M, 2 * f / t, h, device)
        + gemm_time(M, h, f / t, device)
    )
    dense, _ = layer_gemm_times(config, device)
    assert float(dense) == pytest.approx(float(expected), rel=1e-12)


def test_activation_memory_with_grouped_queries_and_swiglu():
    # Korthikanti et al. Table 2's 24/t part with Q (2), K and V (2g/a each), the
    # projection input (2), SwiGLU's two inputs (2·2f/h) and fc2's input (2f/h).
    L, h, a, g, f, V, _ = LLAMA["llama2-70b"]
    t, s, b = 8.0, 4096.0, 1.0
    config = _llama("llama2-70b", tp=t, microbatch_size=b, flash_attention=1.0)
    split = 2 + 4 * g / a + 2 + 2 * (2 * f + f) / h
    expected = s * b * h * (10 + split / t)
    got = activation_bytes_per_layer(config)
    assert float(got) == pytest.approx(expected, rel=1e-12)
    sp = eqx.tree_at(lambda c: c.seq_parallel, config, jnp.asarray(1.0))
    assert float(activation_bytes_per_layer(sp)) == pytest.approx(
        s * b * h * (10 + split) / t, rel=1e-12
    )


def test_swiglu_kernels_move_more_bytes_than_gelu_of_the_same_width():
    config = _llama("llama2-7b", tp=1.0, microbatch_size=1.0)
    plain = eqx.tree_at(lambda c: c.gated_mlp, config, jnp.asarray(0.0))
    fwd, bwd, _ = layer_elementwise_bytes(config)
    fwd0, bwd0, _ = layer_elementwise_bytes(plain)
    tokens_f = 4096.0 * 11008.0
    assert float(fwd - fwd0) == pytest.approx((6 - 4) * tokens_f, rel=1e-12)
    assert float(bwd - bwd0) == pytest.approx((10 - 6) * tokens_f, rel=1e-12)


def test_untied_embeddings_drop_the_embedding_all_reduce():
    base = _llama("llama2-7b", gpus=64.0, tp=8.0, pp=4.0, microbatch_size=1.0)
    base = eqx.tree_at(lambda c: c.global_batch, base, jnp.asarray(64.0))
    tied = eqx.tree_at(lambda c: c.untied_embeddings, base, jnp.asarray(0.0))
    model = pm.hybrid()
    untied_parts, tied_parts = model.breakdown(base), model.breakdown(tied)
    assert float(tied_parts["allreduce"]) > float(untied_parts["allreduce"])


def test_tp_must_divide_the_query_groups():
    config = _llama("llama2-70b", tp=8.0, microbatch_size=1.0)
    assert int(pm.layout_status(config)) == 0
    few = eqx.tree_at(lambda c: c.query_groups, config, jnp.asarray(4.0))
    assert "query groups" in pm.REASONS[int(pm.layout_status(few))]


@pytest.mark.parametrize(
    "name, picked",
    [
        ("llama2_70b_512_a100", dict(microbatch_size=1.0, seq_parallel=1.0)),
        ("llama_65b_2048_a100", dict(microbatch_size=4.0)),
    ],
)
def test_shipped_llama_spaces_read_the_new_fields(name, picked):
    # The layouts `perfmodel sweep` picks on them (docs/layouts.md).
    from pathlib import Path

    from perfmodel._sweep import load_space

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "spaces" / f"{name}.toml"
    space = load_space(path)
    assert space.fixed["gated_mlp"] == 1 and space.fixed["untied_embeddings"] == 1
    layout = dict(gpus=space.axes["gpus"][0], tp=4.0, pp=4.0, interleave=5.0, zero=1.0) | picked
    config = pm.Config(**(dict(space.fixed) | layout))
    assert int(pm.layout_status(config)) == 0
    params = float(pm.model_parameters(config))
    assert params == pytest.approx(69.0e9 if "70b" in name else 65.3e9, rel=0.01)
    step = float(space.model(config))
    flops = float(pm.iteration_flops(config))
    # A plausible A100 run: 35-65% of the 312 TFLOP/s peak.
    assert 0.35 < flops / (step * config.gpus * 312e12) < 0.65


def test_runs_csv_reads_the_new_columns_and_refuses_bad_codes(tmp_path):
    from perfmodel._errors import InputError

    head = "gpus,time_s,tp,layers,hidden,heads,query_groups,ffn_hidden,gated_mlp,seq_len\n"
    path = tmp_path / "runs.csv"
    path.write_text(
        head + "8,1.5,8,80,8192,64,8,28672,1,4096\n16,0.8,8,80,8192,64,8,28672,1,4096\n"
    )
    data = pm.load_benchmarks(path)
    assert float(data.config["query_groups"][0]) == 8.0
    assert float(data.config["gated_mlp"][1]) == 1.0
    path.write_text(head + "8,1.5,8,80,8192,64,8,28672,2,4096\n")
    with pytest.raises(InputError, match="runs.csv row 1 .*gated_mlp.*expected one of 0, 1"):
        pm.load_benchmarks(path)
