"""Write the vendor check's series from Lambda's published PyTorch training tables.

``python benchmarks/vendor/make_series.py`` reads the two tables in ``source/`` (copied
unchanged from lambdal/deeplearning-benchmark, see ``SOURCES.md``) and writes one
``vendor_lambda_<system>_<model>_<precision>.csv`` (columns ``gpus,throughput``; the
system one word, its source group) per
system measured at 1, 2, 4 and 8 GPUs under one name, model and precision, by the rules
fixed before anything was scored (``SOURCES.md``): a model not run on a system (0) is
left out, and so is a series whose throughput per GPU changes by more than `GLITCH`
between two adjacent counts (the source's NCF on three H100 servers jumps 25-fold from 2
to 4 GPUs; a transcription or unit error, not scaling). It prints what it kept and left.
"""

import csv
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "source"
PRECISIONS = {
    "fp16": "lambda_pytorch_train_throughput_fp16.csv",
    "fp32": "lambda_pytorch_train_throughput_fp32.csv",
}
# System → the row name at 1, 2, 4 and 8 GPUs.
SYSTEMS = {
    "v100": (
        "LambdaCloud V100 16GB",
        "LambdaCloud 2x V100 16GB",
        "LambdaCloud 4xV100 16GB",
        "LambdaCloud 8xV100 16GB",
    ),
    "rtx6000ada": ("RTX 6000 Ada", "2x RTX 6000 Ada", "4x RTX 6000 Ada", "8x RTX 6000 Ada"),
    "a100sxm4": (
        "A100 80GB SXM4",
        "2x A100 80GB SXM4",
        "4x A100 80GB SXM4",
        "8x A100 80GB SXM4",
    ),
    "h100pcie": (
        "H100 80GB PCIe Gen5",
        "2x H100 80GB PCIe Gen5",
        "4x H100 80GB PCIe Gen5",
        "8x H100 80GB PCIe Gen5",
    ),
    "h100sxm5": (
        "H100 80GB SXM5",
        "2x H100 80GB SXM5",
        "4x H100 80GB SXM5",
        "8x H100 80GB SXM5",
    ),
    "dellh100": (
        "Dell H100 80GB SXM5",
        "Dell 2x H100 80GB SXM5",
        "Dell 4x H100 80GB SXM5",
        "Dell 8x H100 80GB SXM5",
    ),
    "smch100": (
        "SMC H100 80GB SXM5",
        "SMC 2x H100 80GB SXM5",
        "SMC 4x H100 80GB SXM5",
        "SMC 8x H100 80GB SXM5",
    ),
    "1cch100": (
        "1CC H100 80GB SXM5",
        "1CC 2x H100 80GB SXM5",
        "1CC 4x H100 80GB SXM5",
        "1CC 8x H100 80GB SXM5",
    ),
}
COUNTS = (1, 2, 4, 8)
MODELS = (
    "ssd",
    "bert_base_squad",
    "bert_large_squad",
    "gnmt",
    "ncf",
    "resnet50",
    "tacotron2",
    "transformerxlbase",
    "transformerxllarge",
    "waveglow",
)
GLITCH = 4.0  # largest change of throughput per GPU between adjacent counts kept


def build() -> tuple[dict[str, str], list[str]]:
    """``({file name: CSV text}, [why each left-out series was left out])``."""
    written, left = {}, []
    for precision, file in PRECISIONS.items():
        with open(SOURCE / file, newline="") as fh:
            rows = {row["name_gpu"]: row for row in csv.DictReader(fh)}
        for system, names in SYSTEMS.items():
            for model in MODELS:
                rate = [float(rows[name][model]) for name in names]
                name = f"vendor_lambda_{system}_{model}_{precision}"
                if min(rate) <= 0:
                    left.append(f"{name}: not run")
                    continue
                per_gpu = [r / n for r, n in zip(rate, COUNTS)]
                jumps = [b / a for a, b in zip(per_gpu, per_gpu[1:])]
                if max(jumps) > GLITCH or min(jumps) < 1.0 / GLITCH:
                    left.append(
                        f"{name}: throughput per GPU jumps ×{max(jumps):.3g} / "
                        f"×{min(jumps):.3g} between adjacent counts"
                    )
                    continue
                lines = [f"{n},{r:g}\n" for n, r in zip(COUNTS, rate)]
                written[f"{name}.csv"] = "gpus,throughput\n" + "".join(lines)
    return written, left


def main() -> None:
    for old in HERE.glob("vendor_lambda_*.csv"):
        old.unlink()
    written, left = build()
    for name, text in written.items():
        (HERE / name).write_text(text)
    print(f"{len(written)} series written; {len(left)} left out:")
    for line in left:
        print("  " + line)


if __name__ == "__main__":
    main()
