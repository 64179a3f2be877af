"""NumPy reference model of one Megatron-LM training iteration (GPT, tp × pp × dp).

Every function is pure and vectorised: each argument may be a NumPy array, and all
arguments broadcast together, so a whole design space evaluates in one call (no
per-configuration Python loop). Booleans and modes are numeric arrays too:
``recompute`` is 0 (none), 1 (selective) or 2 (full); flags are 0/1.

Symbols (Narayanan et al. SC'21 §3 and Korthikanti et al. 2022 §4): ``h`` hidden size,
``a`` attention heads, ``L`` transformer layers, ``s`` sequence length, ``V`` vocabulary,
``b`` micro-batch size (sequences), ``B`` global batch (sequences), ``t`` tensor-parallel,
``p`` pipeline-parallel, ``d`` data-parallel degree, ``v`` interleaved model chunks per
pipeline device, ``m = B/(d·b)`` micro-batches per iteration and replica.

Units: FLOPs, bytes, seconds, bytes/s, FLOP/s. Sources cited per function:

* [N21] Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters
  Using Megatron-LM", SC'21 (arXiv 2104.04473).
* [K22] Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
  Models", arXiv 2205.05198 (2022).
* [NCCL] nccl-tests ``doc/PERFORMANCE.md`` bus-bandwidth convention (as perfmodel's
  ``_collectives.py``).
* [MLM21] NVIDIA/Megatron-LM @50a4b5fa (2021-04-08, the release of [N21] Table 1):
  ``megatron/model/distributed.py`` (local DDP: ``main_grad.add_(grad)`` per micro-batch,
  one un-overlapped all-reduce after the backward pass), ``megatron/schedules.py``
  (``no_sync`` for torch DDP, blocking point-to-point transfers).
* [MLM22] NVIDIA/Megatron-LM @83b1e42f (2022-02-13, "gradient accumulation fusion": fused
  fp32 weight-gradient accumulation and the asynchronous tensor-parallel all-reduce of the
  input gradient, overlapped with the weight-gradient GEMM) and @739cb43d (2022-05-24,
  ``mpu/layers.py``: with sequence parallelism the backward all-gather is re-done and the
  reduce-scatter runs asynchronously, overlapped with the GEMMs).
"""

import numpy as np

NONE, SELECTIVE, FULL = 0, 1, 2
RECOMPUTE_CODES = {"none": NONE, "selective": SELECTIVE, "full": FULL}

# ---------------------------------------------------------------------------------------
# Hardware: DGX A100 80GB nodes on Selene (fixed, never fitted).
# ---------------------------------------------------------------------------------------
A100_SELENE = dict(
    # 312 TFLOP/s dense FP16/BF16 tensor core (NVIDIA A100 datasheet).
    peak_flops=312e12,
    # HBM2e 2,039 GB/s (A100 80GB SXM datasheet), at the 90% that large streams reach
    # (the ≥100 MB efficiency in calculon systems/a100_80g.json @caa4b11f).
    hbm_bandwidth=2.039e12 * 0.9,
    # NVLink3/NVSwitch, 300 GB/s per direction per GPU (spec); nccl-tests all_reduce bus
    # bandwidth measured on 8 × A100-SXM4-80GB: ~200 GB/s (nccl-tests#149), 208 GB/s
    # (nccl-tests#178).
    nvlink_bandwidth=200e9,
    nvlink_latency=1e-6,  # per ring step (assumed; small messages only)
    # 8 × HDR 200 Gb/s ConnectX-6 per DGX A100, one per GPU: 25 GB/s; nccl-tests reach
    # 96% of the NIC rate at large sizes (nccl-tests#119: 96 of 100 GB/s).
    network_bandwidth=25e9 * 0.96,
    network_latency=5e-6,  # per ring step (assumed)
    gpus_per_node=8.0,
    # 80 GiB; 90% usable after CUDA context, NCCL buffers and fragmentation (assumed).
    memory_bytes=80 * 2.0**30 * 0.9,
)

# Prior compute efficiency (used "uncalibrated"); `fit_efficiency` replaces it.
PRIOR_EFFICIENCY = dict(e_max=0.8, d0=100.0)

# ---------------------------------------------------------------------------------------
# Software stacks: what each Megatron-LM version overlaps or fuses (fixed, from the code).
# ---------------------------------------------------------------------------------------
STACKS = {
    # [MLM21]: no async TP, unfused gradient accumulation into fp16 main_grad, fp16
    # gradients all-reduced (no --accumulate-allreduce-grads-in-fp32 in sc21/CONFIG.sh).
    "megatron-2021": dict(
        async_tp=0,
        grad_accum_fusion=0,
        dp_overlap=0,
        grad_bytes=2.0,
        scatter_gather=1,
        flash_attention=0,
        deallocate_outputs=0,
    ),
    # [MLM22]: async TP backward collectives, fused fp32 accumulation (fp32 main grads:
    # 18 bytes/parameter as in [K22] Figure 1).
    "megatron-2022": dict(
        async_tp=1,
        grad_accum_fusion=1,
        dp_overlap=0,
        grad_bytes=4.0,
        scatter_gather=1,
        flash_attention=0,
        deallocate_outputs=1,
    ),
    # Megatron-Core (2023+): as 2022 plus --overlap-grad-reduce and flash attention.
    "megatron-core": dict(
        async_tp=1,
        grad_accum_fusion=1,
        dp_overlap=1,
        grad_bytes=4.0,
        scatter_gather=1,
        flash_attention=1,
        deallocate_outputs=1,
    ),
}


def _f(x):
    return np.asarray(x, dtype=np.float64)


# ---------------------------------------------------------------------------------------
# Architecture beyond GPT: grouped-query attention, gated MLPs, untied output layer
# ---------------------------------------------------------------------------------------


def widths(h, a, arch=None):
    """Per-token widths of one layer: ``(qkv, fc1, fc2, gated, untied)``.

    `arch` (None: GPT) may hold ``g`` key/value heads (grouped-query attention, Ainslie
    et al. 2023; Megatron ``--num-query-groups``), ``f`` the MLP width (``--ffn-hidden-size``,
    4h), ``gated`` 1 for SwiGLU (Shazeer 2020; fc1 outputs 2f, fc2 reads f) and
    ``untied`` 1 for an output layer with its own weights. QKV outputs h + 2·g·h/a.
    """
    arch = arch or {}
    h, a = _f(h), _f(a)
    g = _f(arch.get("g", a))
    f = _f(arch.get("f", 4.0 * h))
    gated = _f(arch.get("gated", 0.0))
    return h + 2.0 * g * h / a, (1.0 + gated) * f, f, gated, _f(arch.get("untied", 0.0))


# ---------------------------------------------------------------------------------------
# FLOPs
# ---------------------------------------------------------------------------------------


def layer_forward_flops(h, s, b, t=1.0):
    """Forward FLOPs of one transformer layer for a micro-batch, on one of t GPUs.

    Dense GEMMs ``24·b·s·h²/t`` (QKV 6bsh², projection 2bsh², MLP 16bsh²) and attention
    batched matmuls ``4·b·s²·h/t`` (QKᵀ and scores·V) [N21 §5.1, eq. 3 derivation].
    Returns ``(dense, attention)`` in FLOPs.
    """
    h, s, b, t = _f(h), _f(s), _f(b), _f(t)
    return 24.0 * b * s * h * h / t, 4.0 * b * s * s * h / t


def recompute_passes(recompute):
    """Extra forward passes of ``(dense GEMMs, attention core)`` recomputation adds.

    none (0): (0, 0); selective (1): (0, 1), only QKᵀ, softmax, dropout and scores·V are
    recomputed [K22 §5]; full (2): (1, 1), the whole layer forward [N21 §3.5].
    """
    r = _f(recompute)
    return np.where(r >= FULL, 1.0, 0.0), np.where(r >= SELECTIVE, 1.0, 0.0)


def logit_flops(h, s, b, V, t=1.0):
    """Forward FLOPs of the output (logit) GEMM, ``2·b·s·h·V/t`` [N21 eq. 3 term V/16lh]."""
    return 2.0 * _f(b) * _f(s) * _f(h) * _f(V) / _f(t)


def iteration_flops(h, s, L, V, B, recompute=FULL, a=1.0, arch=None):
    """Hardware FLOPs of one iteration, all GPUs together (FLOPs).

    Forward + backward (2×) + recomputation of every layer, plus the logits (forward and
    backward, never recomputed): ``B·L·[(3+r_d)·24sh² + (3+r_a)·4s²h] + 6·B·s·h·V``.
    With full recomputation this is [N21] eq. 3, ``96·B·s·L·h²·(1 + s/6h + V/16Lh)``;
    with none it is the model FLOPs (MFU numerator) of [K22] §6. With `arch` (`widths`)
    the dense part is ``2·B·s·h·(qkv + h + fc1 + fc2)`` instead of 24·B·s·h².
    """
    dense, attn = layer_forward_flops(h, s, B)
    if arch:
        qkv, fc1, fc2, _, _ = widths(h, a, arch)
        dense = 2.0 * _f(B) * _f(s) * _f(h) * (qkv + _f(h) + fc1 + fc2)
    rd, ra = recompute_passes(recompute)
    return _f(L) * ((3.0 + rd) * dense + (3.0 + ra) * attn) + 3.0 * logit_flops(h, s, B, V)


# ---------------------------------------------------------------------------------------
# Compute rate: a saturating GEMM efficiency (the only fitted parameters)
# ---------------------------------------------------------------------------------------


def gemm_efficiency(M, N, K, e_max, d0):
    """Fraction of peak one (M×K)·(K×N) GEMM sustains (dimensionless, in (0, e_max)).

    ``e = e_max / (1 + d0·(1/M + 1/N + 1/K))``: saturating in every dimension, it tends
    to e_max for large matrices and drops when any side nears d0 (tile under-fill and
    wave quantisation for small M or N, per-tile prologue/epilogue not amortised over a
    short K loop). Two parameters, fitted (`fit_efficiency`): e_max (dimensionless) and
    d0 (elements). Micro-batch size enters through M = b·s.
    """
    inv = 1.0 / _f(M) + 1.0 / _f(N) + 1.0 / _f(K)
    return e_max / (1.0 + d0 * inv)


def gemm_time(M, N, K, peak_flops, hbm_bandwidth, e_max, d0, batch=1.0):
    """Seconds of `batch` GEMMs of (M×K)·(K×N) in 2-byte precision, roofline-bounded.

    ``max(2·M·N·K / (peak·e), 2·(M·K + K·N + M·N) / BW_hbm)`` per GEMM (Williams et al.
    2009 roofline); the memory bound matters for attention matmuls, whose K or N is the
    head dimension while the s×s output is written to HBM (no flash attention).
    """
    flops = 2.0 * _f(M) * _f(N) * _f(K)
    compute = flops / (peak_flops * gemm_efficiency(M, N, K, e_max, d0))
    memory = 2.0 * (_f(M) * _f(K) + _f(K) * _f(N) + _f(M) * _f(N)) / hbm_bandwidth
    return _f(batch) * np.maximum(compute, memory)


def layer_gemm_times(h, a, s, b, t, hw, eff, flash_attention=0, arch=None):
    """Seconds of one layer's GEMMs for a micro-batch on one GPU: ``(dense, attention)``.

    Forward only; backward is two GEMMs of the same shapes per forward GEMM (input and
    weight gradients, transposed operands with the same {M, N, K}), so 2× these times.
    Dense (Megatron column/row split [N21 §2.3]): QKV (bs × h)·(h × 3h/t), projection
    (bs × h/t)·(h/t × h), fc1 (bs × h)·(h × 4h/t), fc2 (bs × 4h/t)·(4h/t × h).
    Attention: b·a/t batched (s × d)·(d × s) and (s × s)·(s × d), d = h/a. With `arch`
    the QKV, fc1 and fc2 widths of `widths` replace 3h, 4h and 4h.
    """
    qkv, fc1, fc2, _, _ = widths(h, a, arch)
    h, a, s, b, t = _f(h), _f(a), _f(s), _f(b), _f(t)
    peak, bw = hw["peak_flops"], hw["hbm_bandwidth"]
    e, d0 = eff["e_max"], eff["d0"]
    M = b * s
    dense = (
        gemm_time(M, qkv / t, h, peak, bw, e, d0)
        + gemm_time(M, h, h / t, peak, bw, e, d0)
        + gemm_time(M, fc1 / t, h, peak, bw, e, d0)
        + gemm_time(M, h, fc2 / t, peak, bw, e, d0)
    )
    d = h / a
    heads = b * a / t
    plain = gemm_time(s, s, d, peak, bw, e, d0, heads) + gemm_time(s, d, s, peak, bw, e, d0, heads)
    # Flash attention: same FLOPs in one fused kernel, no s×s tensor in HBM.
    fused = heads * 4.0 * s * s * d / (peak * gemm_efficiency(s, s, d, e, d0))
    return dense, np.where(_f(flash_attention) > 0, fused, plain)


# ---------------------------------------------------------------------------------------
# Memory-bound element-wise kernels
# ---------------------------------------------------------------------------------------

# Bytes per element moved by the element-wise kernels of one layer (fp16, Megatron's
# fused kernels), forward / backward, per token×hidden ("rep": LayerNorms and
# bias-dropout-adds, replicated over t unless sequence parallel), per token×4h/t ("col":
# bias-GeLU) and per attention score b·a·s²/t ("att": scale-mask-softmax and dropout).
#   fwd: 2 LayerNorms × (read 2 + write 2) + 2 bias-dropout-adds × (read 2+2, write 2,
#        mask 1) = 22; bias-GeLU read 2 + write 2 per 4h element = 16/(4h) → 16 per h;
#        softmax read 2 write 2 + dropout read 2 write 2 mask 1 = 9.
#   bwd: LayerNorm read grad 2, input 2, write 2 (×2) + bias-dropout-add grad read 2,
#        mask 1, write 2 (×2) = 22; GeLU read grad, input, write grad = 24;
#        softmax read grad 2, out 2, write 2 + dropout read 2, mask 1, write 2 = 11.
ELEMENTWISE_BYTES = dict(
    rep_fwd=22.0, rep_bwd=22.0, col_fwd=16.0, col_bwd=24.0, att_fwd=9.0, att_bwd=11.0
)
# SwiGLU per element of the MLP width f (GeLU's are col / 4: 4 and 6): forward reads
# gate and value (4) and writes their product (2); backward reads the gradient (2) and
# both inputs (4) and writes both gradients (4).
GATED_BYTES = dict(fwd=6.0, bwd=10.0)


def layer_elementwise_bytes(h, a, s, b, t, seq_parallel=0, flash_attention=0, arch=None):
    """HBM bytes of one layer's element-wise kernels per micro-batch on one GPU.

    Returns ``(forward, backward, attention_forward)`` bytes (the last is what selective
    recomputation repeats). Counts per element in `ELEMENTWISE_BYTES`; the LayerNorm and
    dropout regions are split over t only with sequence parallelism [K22 §4.2.2]; flash
    attention removes the s×s tensors.
    """
    h, a, s, b, t = _f(h), _f(a), _f(s), _f(b), _f(t)
    k = ELEMENTWISE_BYTES
    tokens = b * s
    rep = tokens * h / np.where(_f(seq_parallel) > 0, t, 1.0)
    _, _, f, gated, _ = widths(h, a, arch)
    col = tokens * f / t  # MLP elements; GeLU moves col_fwd/4 bytes each (f = 4h: col_fwd per h)
    on = gated > 0
    col_fwd = np.where(on, GATED_BYTES["fwd"], k["col_fwd"] / 4.0)
    col_bwd = np.where(on, GATED_BYTES["bwd"], k["col_bwd"] / 4.0)
    att = np.where(_f(flash_attention) > 0, 0.0, b * a * s * s / t)
    fwd = k["rep_fwd"] * rep + col_fwd * col + k["att_fwd"] * att
    bwd = k["rep_bwd"] * rep + col_bwd * col + k["att_bwd"] * att
    return fwd, bwd, k["att_fwd"] * att


# ---------------------------------------------------------------------------------------
# Collectives (α-β ring, nccl-tests bus-bandwidth convention)
# ---------------------------------------------------------------------------------------


def all_reduce_time(n, size, latency, bandwidth):
    """Ring all-reduce of `size` bytes over n ranks: ``2(n−1)α + 2(n−1)/n·S/β`` [NCCL]."""
    n = _f(n)
    return 2.0 * (n - 1.0) * latency + 2.0 * (n - 1.0) / n * _f(size) / bandwidth


def all_gather_time(n, size, latency, bandwidth):
    """Ring all-gather (or reduce-scatter) of a `size`-byte buffer: ``(n−1)α + (n−1)/n·S/β``."""
    n = _f(n)
    return (n - 1.0) * latency + (n - 1.0) / n * _f(size) / bandwidth


def tensor_parallel_times(h, s, b, t, recompute, seq_parallel, async_tp, hw):
    """Tensor-parallel collective seconds per layer and micro-batch: ``(sync, overlappable)``.

    S = b·s·h·2 bytes. Without sequence parallelism [N21 §2.3]: 2 all-reduces forward
    (after the row-parallel projection and fc2), 2 backward (input gradients of the
    column-parallel QKV and fc1), 2 more forward with full recomputation. With sequence
    parallelism [K22 §4.2.2] each all-reduce becomes a reduce-scatter + all-gather (same
    ring volume); backward also re-does the 2 all-gathers of the layer inputs [MLM22].
    The column-parallel backward collectives (2 all-reduces, or 2 re-done all-gathers + 2
    reduce-scatters) run asynchronously under the GEMMs with [MLM22] (`async_tp`, always
    with sequence parallelism); the rest are synchronous, on the critical path.
    """
    t, sp = _f(t), _f(seq_parallel) > 0
    size = _f(b) * _f(s) * _f(h) * 2.0
    lat, bw = hw["nvlink_latency"], hw["nvlink_bandwidth"]
    ar = all_reduce_time(t, size, lat, bw)
    ag = all_gather_time(t, size, lat, bw)
    rd, _ = recompute_passes(recompute)
    forward = 2.0 * ar * (1.0 + rd)  # RS+AG costs one all-reduce
    col_bwd = np.where(sp, 4.0 * ag, 2.0 * ar)  # SP: 2 reduce-scatters + 2 re-done AGs
    row_bwd = np.where(sp, 2.0 * ag, 0.0)  # SP: backward of the forward reduce-scatters
    overlapped = np.where(sp | (_f(async_tp) > 0), col_bwd, 0.0)
    sync = forward + row_bwd + col_bwd - overlapped
    on = t > 1.0
    return np.where(on, sync, 0.0), np.where(on, overlapped, 0.0)


# ---------------------------------------------------------------------------------------
# One layer, one micro-batch, one GPU
# ---------------------------------------------------------------------------------------


def layer_microbatch_time(h, a, s, b, t, recompute, seq_parallel, stack, hw, eff, arch=None):
    """Seconds of one layer's forward + backward (+ recomputation) for one micro-batch.

    GEMMs (`layer_gemm_times`): forward 1×, backward 2×, recomputation (`recompute_passes`)
    1× the dense and/or attention forward. Element-wise kernels at the HBM bandwidth
    (`layer_elementwise_bytes`): forward, backward and the recomputed part. Tensor-parallel
    collectives (`tensor_parallel_times`): synchronous ones add; overlappable ones add
    only what exceeds the backward GEMMs they hide under (``max(0, comm − gemm)``).
    Returns ``(total, backward_part, forward_part)`` (the backward part is the window a
    data-parallel all-reduce can hide in; the forward part, ZeRO-1's weight all-gather).
    """
    fa = stack["flash_attention"]
    dense, attn = layer_gemm_times(h, a, s, b, t, hw, eff, fa, arch)
    rd, ra = recompute_passes(recompute)
    fwd_bytes, bwd_bytes, att_bytes = layer_elementwise_bytes(h, a, s, b, t, seq_parallel, fa, arch)
    bw = hw["hbm_bandwidth"]
    # Flash attention's backward recomputes the scores: 2.5× its forward, not 2×.
    attn_bwd = np.where(_f(fa) > 0, 2.5, 2.0) * attn
    forward = dense + attn + fwd_bytes / bw
    backward = 2.0 * dense + attn_bwd + bwd_bytes / bw
    recomputed = rd * (dense + fwd_bytes / bw) + ra * (attn + np.where(rd > 0, 0.0, att_bytes / bw))
    sync, overlappable = tensor_parallel_times(
        h, s, b, t, recompute, seq_parallel, stack["async_tp"], hw
    )
    exposed = sync + np.maximum(0.0, overlappable - 2.0 * dense)
    total = forward + backward + recomputed + exposed
    return total, backward + recomputed, forward


# ---------------------------------------------------------------------------------------
# Parameters and pipeline stages
# ---------------------------------------------------------------------------------------


def layer_parameters(h, a=1.0, arch=None):
    """Parameters of one transformer layer, ``12h² + 13h`` [N21 §5.1, K22 §3].

    With `arch` (`widths`): weights and biases of QKV, projection, fc1 and fc2 and two
    LayerNorms, ``h·(qkv + h + fc1 + fc2) + qkv + h + fc1 + h + 4h``.
    """
    h = _f(h)
    if not arch:
        return 12.0 * h * h + 13.0 * h
    qkv, fc1, fc2, _, _ = widths(h, a, arch)
    return h * (qkv + h + fc1 + fc2) + qkv + h + fc1 + h + 4.0 * h


def embedding_parameters(h, s, V):
    """Word (V·h) and position (s·h) embedding parameters; the output layer is tied."""
    return _f(V) * _f(h) + _f(s) * _f(h)


def stage_parameters(h, s, V, L, t, p, a=1.0, arch=None):
    """Parameters held by the busiest GPU: ``(layers, embedding)`` per GPU.

    L/p layers split over t, and the first stage's word embedding (V·h/t, vocabulary
    parallel) plus position embedding; the last stage holds a tied copy of the word
    embedding (V·h/t) for the logits [N21 §3, Megatron tied embeddings], or the output
    layer's own (untied) weights, which with p = 1 are on the same GPU too.
    """
    layers = layer_parameters(h, a, arch) * _f(L) / _f(p) / _f(t)
    untied = widths(h, a, arch)[4]
    words = np.where((_f(p) <= 1.0) & (untied > 0), 2.0, 1.0)
    embedding = words * _f(V) * _f(h) / _f(t) + _f(s) * _f(h)
    return layers, embedding


def inflight_layers(L, p, v, m):
    """Layer-activations the first pipeline device holds at its peak (layers × micro-batches).

    1F1B [N21 §2.2.1]: min(m, p) micro-batches of L/p layers. Interleaved with v chunks
    [N21 §2.2.2]: Megatron's warm-up keeps ``2(p−1) + (v−1)·p + 1`` chunks of L/(p·v)
    layers, i.e. L·(1 + (p−1)/(p·v)) layers [K22 §4.2.3]; at most m·v chunks.
    """
    L, p, v, m = _f(L), _f(p), _f(v), _f(m)
    chunks = np.where(v > 1.0, (v + 1.0) * p - 1.0, p)
    return L / (p * v) * np.minimum(m * v, chunks)


def pipeline_schedule_factor(p, v, m):
    """Micro-batch slots of the busiest device's timeline, ``m + (p−1)/v``.

    1F1B takes (m + p − 1)·(t_f + t_b); interleaving v chunks shrinks the bubble to
    (p−1)/v slots [N21 §2.2.2]: bubble fraction (p−1)/(v·m) of the ideal time.
    """
    return _f(m) + (_f(p) - 1.0) / _f(v)


def bubble_fraction(p, v, m):
    """Pipeline bubble over the ideal time, ``(p−1)/(v·m)`` [N21 §2.2.2]."""
    return (_f(p) - 1.0) / (_f(v) * _f(m))


def p2p_time(h, s, b, t, p, v, m, d, seq_parallel, scatter_gather, hw):
    """Seconds of point-to-point activation transfers on the critical path per iteration.

    Each transfer moves b·s·h·2 bytes, divided over the t ranks with the scatter/gather
    optimisation [N21 §4.1] or sequence parallelism (then re-gathered over NVLink with an
    all-gather when not sequence parallel). Adjacent stages are tp·dp ranks apart in
    Megatron's rank order; when the p stages span more than one node some boundary is
    on InfiniBand (one NIC per GPU) and paces the lock-stepped schedule, else NVLink.
    Blocking transfers [MLM21 schedules.py]: one after every chunk's forward and
    backward, ``2·(v·m + p − 1)`` per iteration; none if p = 1.
    """
    h, s, b, t, p, v, m, d = map(_f, (h, s, b, t, p, v, m, d))
    size = b * s * h * 2.0
    split = (_f(scatter_gather) > 0) | (_f(seq_parallel) > 0)
    message = np.where(split, size / t, size)
    # Stages are tp·dp ranks apart: a node holds G/(tp·dp) consecutive stages, so with
    # more stages than that some boundary crosses nodes, and the slowest one paces.
    remote = p * t * d > hw["gpus_per_node"]
    lat = np.where(remote, hw["network_latency"], hw["nvlink_latency"])
    bw = np.where(remote, hw["network_bandwidth"], hw["nvlink_bandwidth"])
    one = lat + message / bw
    regather = (_f(scatter_gather) > 0) & (_f(seq_parallel) <= 0) & (t > 1.0)
    one = one + np.where(
        regather, all_gather_time(t, size, hw["nvlink_latency"], hw["nvlink_bandwidth"]), 0.0
    )
    count = 2.0 * (v * m + p - 1.0)
    return np.where(p > 1.0, count * one, 0.0)


def logits_time(h, s, b, V, t, hw, eff):
    """Seconds per micro-batch the last stage spends on the output layer (imbalance).

    Logit GEMM (bs × h)·(h × V/t) forward and two backward GEMMs, the vocabulary-parallel
    cross entropy in fp32 (24 bytes per logit moved in HBM: fp16→fp32 copy, max, exp,
    sum, normalise, gradient), and the all-reduce of the logit input gradient over t.
    The last device does this every micro-batch on top of its layers, so the pipeline
    pays it m times, not m/p [N21 §3, the stage imbalance of the output layer].
    """
    h, s, b, V, t = map(_f, (h, s, b, V, t))
    gemm = 3.0 * gemm_time(
        b * s, V / t, h, hw["peak_flops"], hw["hbm_bandwidth"], eff["e_max"], eff["d0"]
    )
    loss = 24.0 * b * s * V / t / hw["hbm_bandwidth"]
    comm = np.where(
        t > 1.0,
        all_reduce_time(t, b * s * h * 2.0, hw["nvlink_latency"], hw["nvlink_bandwidth"]),
        0.0,
    )
    return gemm + loss + comm


def grad_accumulation_time(params, grad_bytes, grad_accum_fusion, hw):
    """Seconds per micro-batch to add fresh weight gradients into the main-gradient buffer.

    Unfused [MLM21 distributed.py ``main_grad.add_(grad)``]: read the 2-byte gradient,
    read and write the main gradient: ``params·(2 + 2·grad_bytes)`` HBM bytes. Fused into
    the weight-gradient GEMM [MLM22]: 0.
    """
    bytes_ = _f(params) * (2.0 + 2.0 * _f(grad_bytes))
    return np.where(_f(grad_accum_fusion) > 0, 0.0, bytes_ / hw["hbm_bandwidth"])


def optimizer_time(params, grad_bytes, zero, d, hw):
    """Seconds of the mixed-precision Adam step on one GPU (memory bound).

    Fused Adam reads fp32 master weights, gradient, m and v and writes master, m, v
    (28 bytes), copies fp32 → 2-byte weights (6), and unscales / checks / clips the
    gradient (3 passes of grad_bytes): ``params·(34 + 3·grad_bytes)/BW_hbm``; ZeRO ≥ 1
    shards it over d [Rajbhandari et al. 2020].
    """
    bytes_ = _f(params) * (34.0 + 3.0 * _f(grad_bytes))
    return bytes_ / np.where(_f(zero) >= 1.0, _f(d), 1.0) / hw["hbm_bandwidth"]


def data_parallel_time(params, grad_bytes, t, d, hw):
    """Seconds of the gradient all-reduce over d replicas (hierarchical, per GPU).

    Megatron orders ranks tp, then dp: ``l = min(d, G/t)`` replicas share a node. A
    reduce-scatter and all-gather inside the node (NVLink) around a ring all-reduce of
    S/l across the d/l nodes (one NIC per GPU), S = params·grad_bytes. ZeRO-1/2 move the
    same bytes (reduce-scatter of gradients, all-gather of weights).
    """
    t, d = _f(t), _f(d)
    size = _f(params) * _f(grad_bytes)
    local = np.minimum(d, np.maximum(hw["gpus_per_node"] / t, 1.0))
    nodes = d / local
    intra = 2.0 * all_gather_time(local, size, hw["nvlink_latency"], hw["nvlink_bandwidth"])
    inter = all_reduce_time(nodes, size / local, hw["network_latency"], hw["network_bandwidth"])
    return np.where(d > 1.0, intra + inter, 0.0)


def zero3_time(params, t, d, m, recompute, hw, layers=1.0):
    """Seconds of ZeRO-3 parameter all-gathers per iteration (before any overlap).

    Each micro-batch all-gathers the 2-byte weights for the forward, again for the
    backward (and for the recomputed forward with full recomputation), and
    reduce-scatters the gradients: ``m·(2 + r_full)`` all-gathers + m reduce-scatters
    of params·2 bytes over d [Rajbhandari et al. 2020 §5; FSDP reshard-after-forward].
    The data-parallel all-reduce is then not needed. Each goes layer by layer over the
    device's `layers` (L/p), paying its latency that many times.
    """
    rd, _ = recompute_passes(recompute)
    one = data_parallel_time(params, 2.0, t, d, hw) / 2.0  # one AG (or RS) ≈ half an AR
    latency = data_parallel_time(params, 0.0, t, d, hw) / 2.0
    return _f(m) * (3.0 + rd) * (one + (_f(layers) - 1.0) * latency)


def zero2_time(params, grad_bytes, t, d, hw):
    """Seconds of ZeRO-2's collectives: ``(per micro-batch, per iteration)``.

    A reduce-scatter of the gradients after every micro-batch's backward (each rank keeps
    only its shard; DeepSpeed issue #2252), half a hierarchical all-reduce of
    params·grad_bytes; and one all-gather of the 2-byte weights after the sharded step
    [Rajbhandari et al. 2020 §5.2].
    """
    scatter = data_parallel_time(params, grad_bytes, t, d, hw) / 2.0
    return scatter, data_parallel_time(params, 2.0, t, d, hw) / 2.0


def embedding_sync_time(h, V, t, p, grad_bytes, hw, untied=0.0):
    """Seconds of the tied-embedding gradient all-reduce between first and last stage.

    V·h/t gradients over 2 ranks on different nodes (InfiniBand), when p > 1 [N21 §3];
    none when the output layer is untied.
    """
    size = _f(V) * _f(h) / _f(t) * _f(grad_bytes)
    t2 = all_reduce_time(2.0, size, hw["network_latency"], hw["network_bandwidth"])
    return np.where((_f(p) > 1.0) & (_f(untied) <= 0), t2, 0.0)


# ---------------------------------------------------------------------------------------
# Memory per GPU
# ---------------------------------------------------------------------------------------


def activation_bytes_per_layer(
    h, a, s, b, t, recompute, seq_parallel, flash_attention=0, arch=None
):
    """Bytes of activations one layer stores for one micro-batch on one GPU [K22 Table 2].

    none: ``sbh·(10 + 24/t + 5as/(ht))``; with sequence parallelism
    ``sbh/t·(34 + 5as/h)``; selective drops the 5as/h term (also flash attention);
    full keeps the layer input, ``2sbh`` (÷t with sequence parallelism). With `arch` the
    24 split over t are Q (2), K and V (2g/a each), the projection input (2), and the
    activation's inputs (2·fc1/h) and fc2's (2·fc2/h).
    """
    qkv, fc1, fc2, _, _ = widths(h, a, arch)
    h, a, s, b, t = map(_f, (h, a, s, b, t))
    sp = _f(seq_parallel) > 0
    r = _f(recompute)
    sbh = s * b * h
    score = np.where((r >= SELECTIVE) | (_f(flash_attention) > 0), 0.0, 5.0 * a * s / h)
    split = 2.0 * (qkv + h + fc1 + fc2) / h  # 24 for GPT
    plain = np.where(sp, sbh / t * (10.0 + split + score), sbh * (10.0 + split / t + score / t))
    full = 2.0 * sbh / np.where(sp, t, 1.0)
    return np.where(r >= FULL, full, plain)


def memory_per_gpu(
    h, a, s, V, L, b, t, p, d, v, m, recompute, seq_parallel, zero, stack, arch=None
):
    """Bytes the busiest (first) pipeline GPU holds, by part; ``"total"`` sums them.

    * ``layer_states``: L/p layers' parameters over t (`layer_parameters`) × (2 weight
      + grad_bytes + 12 optimizer) bytes — with grad_bytes = 4 the 18 bytes/parameter of
      [K22] Figure 1; ZeRO-1 shards the 12, ZeRO-2 the gradients, ZeRO-3 the weights too.
    * ``embedding_states``: the same for the embedding on the first stage.
    * ``layer_activations``: `activation_bytes_per_layer` × `inflight_layers` [K22 §4].
    * ``extra_activations``: with full recomputation the working set of one layer
      recomputed without checkpoints; the embedding dropout mask (1 byte per element of
      the in-flight micro-batches); with p = 1, the fp32 logits and gradient of one
      micro-batch (6·b·s·V/t) [K22 §4.3]; with p > 1 and the stack's
      ``deallocate_outputs`` 0 (2021), each chunk in flight keeps its output, 2·b·s·h
      bytes (schedules.py @50a4b5fa ``output_tensors``; freed once sent since 2021-12).
    """
    grad = _f(stack["grad_bytes"])
    z, d = _f(zero), _f(d)
    layers, embedding = stage_parameters(h, s, V, L, t, p, a, arch)
    per_param = (
        2.0 / np.where(z >= 3.0, d, 1.0)
        + grad / np.where(z >= 2.0, d, 1.0)
        + 12.0 / np.where(z >= 1.0, d, 1.0)
    )
    act = activation_bytes_per_layer(
        h, a, s, b, t, recompute, seq_parallel, stack["flash_attention"], arch
    )
    layers_in_flight = inflight_layers(L, p, v, m)
    working = np.where(
        _f(recompute) >= FULL,
        activation_bytes_per_layer(
            h, a, s, b, t, NONE, seq_parallel, stack["flash_attention"], arch
        ),
        0.0,
    )
    micro_in_flight = layers_in_flight / (_f(L) / _f(p))
    dropout_mask = (
        _f(s) * _f(b) * _f(h) * micro_in_flight / np.where(_f(seq_parallel) > 0, _f(t), 1.0)
    )
    logits = np.where(_f(p) <= 1.0, 6.0 * _f(b) * _f(s) * _f(V) / _f(t), 0.0)
    # Stage outputs kept until their backward (2 bytes per element of b·s·h per chunk in
    # flight) unless pseudo-deallocated [MLM22 schedules.deallocate_output_tensor].
    chunk_outputs = np.where(
        (_f(p) > 1.0) & (_f(stack.get("deallocate_outputs", 1)) <= 0.0),
        2.0 * dropout_mask * _f(v),
        0.0,
    )
    parts = {
        "layer_states": layers * per_param,
        "embedding_states": embedding * per_param,
        "layer_activations": act * layers_in_flight,
        "extra_activations": working + dropout_mask + logits + chunk_outputs,
    }
    parts["total"] = sum(parts.values())
    return parts


# ---------------------------------------------------------------------------------------
# One iteration
# ---------------------------------------------------------------------------------------


def iteration_time(
    h,
    a,
    s,
    V,
    L,
    b,
    t,
    p,
    d,
    v,
    B,
    recompute,
    seq_parallel,
    zero,
    stack,
    hw=A100_SELENE,
    eff=PRIOR_EFFICIENCY,
    arch=None,
):
    """Seconds of one training iteration, by term; ``"total"`` is their sum.

    * ``pipeline``: ``(m + (p−1)/v)`` slots (`pipeline_schedule_factor`) of the busiest
      device's per-micro-batch work — L/p layers (`layer_microbatch_time`) and the
      gradient accumulation of its parameters (`grad_accumulation_time`).
    * ``logits``: m × `logits_time` on the last device (stage imbalance).
    * ``p2p``: `p2p_time`.
    * ``data_parallel``: exposed part of `data_parallel_time` (all of it unless
      ``dp_overlap``, then what exceeds the last micro-batch's backward on the device);
      ZeRO-1 by a gradient reduce-scatter exposed as that and a weight all-gather
      (`zero2_time`) exposed beyond the next iteration's first forward when ``dp_overlap``;
      ZeRO-2 by m reduce-scatters, each exposed beyond a micro-batch's backward, and a
      weight all-gather (`zero2_time`); ZeRO-3 by `zero3_time`, overlapped with each
      micro-batch's compute (prefetched) when ``dp_overlap``.
    * ``embedding_sync``: `embedding_sync_time`; ``optimizer``: `optimizer_time`.
    """
    m = _f(B) / (_f(d) * _f(b))
    layer, layer_bwd, layer_fwd = layer_microbatch_time(
        h, a, s, b, t, recompute, seq_parallel, stack, hw, eff, arch
    )
    layers, embedding = stage_parameters(h, s, V, L, t, p, a, arch)
    device_params = layers + embedding
    per_micro = _f(L) / _f(p) * layer + grad_accumulation_time(
        device_params, stack["grad_bytes"], stack["grad_accum_fusion"], hw
    )
    pipeline = pipeline_schedule_factor(p, v, m) * per_micro
    logits = m * logits_time(h, s, b, V, t, hw, eff)
    p2p = p2p_time(h, s, b, t, p, v, m, d, seq_parallel, stack["scatter_gather"], hw)
    z = _f(zero)
    allreduce = data_parallel_time(device_params, stack["grad_bytes"], t, d, hw)
    window = np.where(_f(stack["dp_overlap"]) > 0, _f(L) / _f(p) * layer_bwd, 0.0)
    zero3 = zero3_time(device_params, t, d, m, recompute, hw, _f(L) / _f(p))
    scatter, gather = zero2_time(device_params, stack["grad_bytes"], t, d, hw)
    dp_exposed = np.where(
        z >= 3.0,
        np.maximum(0.0, zero3 - np.where(_f(stack["dp_overlap"]) > 0, pipeline, 0.0)),
        np.maximum(0.0, allreduce - window),
    )
    # ZeRO-1: the gradients reduce-scattered under the last backward, the 2-byte weights
    # all-gathered under the next iteration's first forward (Megatron-Core's
    # --overlap-param-gather) when dp_overlap.
    forward = np.where(_f(stack["dp_overlap"]) > 0, _f(L) / _f(p) * layer_fwd, 0.0)
    zero1 = np.maximum(0.0, scatter - window) + np.maximum(0.0, gather - forward)
    dp_exposed = np.where(z == 1.0, zero1, dp_exposed)
    dp_exposed = np.where(
        (z >= 2.0) & (z < 3.0), m * np.maximum(0.0, scatter - window) + gather, dp_exposed
    )
    parts = {
        "pipeline": pipeline,
        "logits": logits,
        "p2p": p2p,
        "data_parallel": dp_exposed,
        "embedding_sync": embedding_sync_time(
            h, V, t, p, stack["grad_bytes"], hw, widths(h, a, arch)[4]
        ),
        "optimizer": optimizer_time(device_params, stack["grad_bytes"], zero, d, hw),
    }
    parts["total"] = sum(parts.values())
    return parts
