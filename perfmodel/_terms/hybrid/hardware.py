"""Published numbers the `hybrid` family starts from: GPUs and Megatron-LM software stacks.

Nothing here is fitted except `GPUS[...]["e_max"]` and ``["d0"]`` (see each entry).
`USABLE_MEMORY` is read off published runs (see its comment).
"""

import re

GPUS: dict[str, dict[str, float]] = {
    # DGX A100 80GB (Selene, the machine of Narayanan et al. SC'21 and Korthikanti et al.
    # 2022). Peak: 312 TFLOP/s dense FP16/BF16 (A100 datasheet). HBM2e 2,039 GB/s at the
    # 90% large streams reach (calculon systems/a100_80g.json @caa4b11f). NVLink3 via
    # NVSwitch: nccl-tests all_reduce bus bandwidth ~200 GB/s on 8 × A100-SXM4-80GB
    # (nccl-tests#149; 208 GB/s in #178), spec 300 GB/s per direction. 8 × HDR 200 Gb/s
    # ConnectX-6, one per GPU: 25 GB/s at the 96% nccl-tests reach (nccl-tests#119).
    # Latencies per ring step assumed (1 µs, 5 µs; negligible at these message sizes).
    # e_max and d0: fitted on Korthikanti et al. Table 5's 22B (8 GPUs) and 175B (64 GPUs)
    # full-recomputation runs (benchmarks/megatron.py).
    "A100-80GB": dict(
        peak_flops=312e12,
        hbm_bandwidth=2.039e12 * 0.9,
        nvlink_bandwidth=200e9,
        nvlink_latency=1e-6,
        network_bandwidth=25e9 * 0.96,
        network_latency=5e-6,
        memory_bytes=80 * 2.0**30,
        e_max=0.8892,
        d0=338.2,
    ),
    # DGX A100 320GB: the A100-80GB's chip, links and network (8 × HDR 200 Gb/s) with
    # 40 GB of HBM2 at 1,555 GB/s (A100 datasheet; 90% reached, as above). e_max and d0:
    # the 80 GB part's (same tensor cores; not measured on this part).
    "A100-40GB": dict(
        peak_flops=312e12,
        hbm_bandwidth=1.555e12 * 0.9,
        nvlink_bandwidth=200e9,
        nvlink_latency=1e-6,
        network_bandwidth=25e9 * 0.96,
        network_latency=5e-6,
        memory_bytes=40 * 2.0**30,
        e_max=0.8892,
        d0=338.2,
    ),
    # DGX H100 (SXM5): 989 TFLOP/s dense BF16 and 3.35 TB/s HBM3 (H100 datasheet),
    # NVLink4 450 GB/s per direction (~360 GB/s all-reduce bus bandwidth, nccl-tests#312),
    # 8 × ConnectX-7 NDR 400 Gb/s (50 GB/s per GPU). e_max and d0: the A100 values, not
    # measured on H100 — refit them on H100 runs (`perfmodel fit --model hybrid`).
    "H100-80GB": dict(
        peak_flops=989e12,
        hbm_bandwidth=3.35e12 * 0.9,
        nvlink_bandwidth=360e9,
        nvlink_latency=1e-6,
        network_bandwidth=50e9 * 0.96,
        network_latency=5e-6,
        memory_bytes=80 * 2.0**30,
        e_max=0.8892,
        d0=338.2,
    ),
    # DGX H200: the H100's GH100 chip (989 TFLOP/s dense BF16), NVLink4/NVSwitch and
    # ConnectX-7 NDR 400 Gb/s, with 141 GB of HBM3e at 4.8 TB/s (H200 datasheet). NVLink
    # bus bandwidth as the H100's (same links; nccl-tests#272 reports 475 GB/s on 8 × H200
    # with NCCL's in-switch reduction, NVLS, which the ring model does not assume).
    # e_max and d0: the A100 values, not measured on H200.
    "H200-141GB": dict(
        peak_flops=989e12,
        hbm_bandwidth=4.8e12 * 0.9,
        nvlink_bandwidth=360e9,
        nvlink_latency=1e-6,
        network_bandwidth=50e9 * 0.96,
        network_latency=5e-6,
        memory_bytes=141 * 2.0**30,
        e_max=0.8892,
        d0=338.2,
    ),
    # DGX B200: 2.25 PFLOP/s dense BF16 per GPU (DGX B200 datasheet: 72 PFLOP/s FP8 with
    # sparsity for 8 GPUs, BF16 half of FP8, dense half of sparse), 180 GB of HBM3e at
    # 8 TB/s, NVLink5 900 GB/s per direction: NCCL's topology search gives 8 × B200 a ring
    # bandwidth of 720 GB/s (nccl#1807, "maxBw 721.8"), 80% of the links as for H100.
    # 8 × ConnectX-7 NDR 400 Gb/s (nccl-tests#389). e_max and d0: the A100 values, not
    # measured on B200.
    "B200-180GB": dict(
        peak_flops=2.25e15,
        hbm_bandwidth=8.0e12 * 0.9,
        nvlink_bandwidth=720e9,
        nvlink_latency=1e-6,
        network_bandwidth=50e9 * 0.96,
        network_latency=5e-6,
        memory_bytes=180 * 2.0**30,
        e_max=0.8892,
        d0=338.2,
    ),
}

STACKS: dict[str, dict[str, float]] = {
    # Megatron-LM @50a4b5fa (2021-04, Narayanan et al. SC'21): synchronous tensor-parallel
    # collectives, unfused gradient accumulation into fp16 main_grad, fp16 gradients
    # all-reduced (examples/sc21/CONFIG.sh), local DDP (no overlap), scatter/gather sends,
    # stage outputs kept until their backward (schedules.py: output_tensors.append).
    "megatron-2021": dict(
        async_tp=0.0,
        grad_accum_fusion=0.0,
        dp_overlap=0.0,
        grad_bytes=2.0,
        scatter_gather=1.0,
        flash_attention=0.0,
        deallocate_outputs=0.0,
    ),
    # Megatron-LM @83b1e42f / @739cb43d (2022, Korthikanti et al.): asynchronous
    # tensor-parallel backward collectives, fused fp32 gradient accumulation, sent stage
    # outputs pseudo-deallocated (schedules.deallocate_output_tensor, 2022-01).
    "megatron-2022": dict(
        async_tp=1.0,
        grad_accum_fusion=1.0,
        dp_overlap=0.0,
        grad_bytes=4.0,
        scatter_gather=1.0,
        flash_attention=0.0,
        deallocate_outputs=1.0,
    ),
    # Megatron-Core (2023+): as 2022 plus --overlap-grad-reduce and flash attention; the
    # defaults of `Config`.
    "megatron-core": dict(
        async_tp=1.0,
        grad_accum_fusion=1.0,
        dp_overlap=1.0,
        grad_bytes=4.0,
        scatter_gather=1.0,
        flash_attention=1.0,
        deallocate_outputs=1.0,
    ),
}

# Share of a GPU's memory that the closed-form memory (`hybrid_memory`: weights, gradients,
# optimizer state, activations) may fill under each stack; the rest is the CUDA context,
# NCCL and cuBLAS buffers and the caching allocator's fragmentation, which the closed form
# does not count. Dimensionless.
#   megatron-2021: 0.74 (59.2 GiB of 80). Narayanan et al. SC'21 §5.8, Figure 17 (145B,
#   t 8, p 16, micro-batch 1 on 128 A100-80GB): with recomputation the throughput at large
#   batches is "up to 2x" the best without it. The model gives that 2x only if the run
#   without recomputation stopped at global batch 8 (7.59 / 3.76 sequences/s; at batch 16
#   the ratio would be 1.37), i.e. batch 16 (closed form 62.7 GiB) did not fit while
#   batch 8 (40.5 GiB) did; Table 1's published runs need up to 55.4 GiB. 0.74 is the
#   middle of [55.4, 62.7) GiB (`benchmarks/megatron_research/sc21_figures.py`).
#   megatron-2022 and megatron-core: 0.9 (assumed; Korthikanti et al. Table 5's runs need
#   up to 63.5 GiB of closed-form memory, so the share is at least 0.79).
USABLE_MEMORY: dict[str, float] = {
    "megatron-2021": 0.74,
    "megatron-2022": 0.9,
    "megatron-core": 0.9,
}


def gpu_named(name: str) -> str | None:
    """The key of `GPUS` that `name` spells (case, spaces, dashes and the words NVIDIA,
    DGX, SXM4/SXM5, HBM2e/HBM3/HBM3e ignored: ``"A100"``, ``"NVIDIA A100-SXM4-80GB"``,
    ``"DGX H100"``, ``"h100 sxm5 80gb"``, ``"NVIDIA H200"``), or None. A plain "A100" is
    the 80 GB part, the one of every published Megatron-LM run; other parts (A100 PCIe,
    H100 PCIe, H100 NVL, H800, V100) are not in `GPUS` and get None."""
    key = re.sub(r"[^a-z0-9]", "", str(name).lower())
    for word in ("nvidia", "dgx", "sxm5", "sxm4", "sxm", "hbm2e", "hbm3e", "hbm3", "tensorcore"):
        key = key.replace(word, "")
    for gpu in GPUS:
        base, _, memory = gpu.lower().partition("-")
        if key in (base, base + memory, base + memory.removesuffix("b")):
            return gpu
    return None
