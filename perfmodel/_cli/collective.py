"""`perfmodel fit-collective`, and the collective options of `perfmodel fit`.

``fit --with-collective LOG...`` fits step times and nccl-tests measurements jointly;
``fit --collective-fit FILE`` fixes the link parameters from a saved collective fit.
"""

import os
import sys

import numpy as np

from .._collective import (
    collective_fit_to_dict,
    fit_collective,
    fit_joint,
    gpus_per_node_of,
    link_parameters,
    load_collective_fit,
    save_collective_fit,
)
from .._datasets import datasets_dir, load_nccl_log, nccl_log_info
from .._errors import InputError
from .._fitting import fit
from .._presets import data_parallel
from .common import (
    check_outputs,
    format_table,
    input_paths,
    message,
    print_json,
    warn_not_converged,
)


def _inputs(args) -> list:
    if args.ranks is not None and args.ranks < 1:
        raise InputError(f"--ranks must be ≥ 1, got {args.ranks}")
    names = [*args.logs, *(args.dataset or ())]
    paths = [*args.logs, *map(str, _shipped_paths(args))]
    for i, name in enumerate(names):  # the same log twice was counted twice, silently
        if name in names[:i] or any(_same(paths[i], other) for other in paths[:i]):
            raise InputError(f"{name}: given twice; each log counts once, give it once")
    items = list(args.logs)
    items += [load_nccl_log(name) for name in args.dataset or ()]
    if not items:
        raise InputError(
            f"give nccl-tests logs (LOG ...) or --dataset NAME; shipped logs are in "
            f"{datasets_dir() / 'nccl'}"
        )
    return items


def _shipped_paths(args) -> list:
    """The files of the shipped logs `--dataset` names (its errors name unknown ones)."""
    return [datasets_dir() / "nccl" / f"{nccl_log_info(n).name}.log" for n in args.dataset or ()]


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def cli_hints(error: InputError, ranks_flag: str) -> InputError:
    """The parser's error with the command-line flag in place of the keyword argument
    (``{arg:n_ranks}`` is `ranks_flag`, the others `app.flag`)."""
    from .app import flag

    text = error.render(lambda name: ranks_flag if name == "n_ranks" else flag(name))
    text = text.replace("pass collective=", "pass --collective NAME")
    return InputError(text.replace("pass n_ranks=", f"pass {ranks_flag} N"))


def run_fit_collective(args) -> int:
    # A shipped log named by --dataset is an input too: -o over it replaced it by JSON.
    check_outputs({"-o": args.output}, input_paths(args.logs, *map(str, _shipped_paths(args))))
    try:
        result = fit_collective(
            _inputs(args),
            collective=args.collective,
            n_ranks=args.ranks,
            factor=args.factor,
            link_bandwidth=args.link_bandwidth,
            loss=args.loss,
            n_starts=args.starts,
            seed=args.seed,
        )
    except InputError as error:
        raise cli_hints(error, "--ranks") from None
    if args.output is not None:
        save_collective_fit(result, args.output)
    if args.json:
        print_json(collective_fit_to_dict(result))
        return 0
    rows = sum(len(g.rows["time_s"]) for g in result.groups)
    print(
        f"{', '.join(result.sources)}: {rows} measurements; factor {result.factor}, "
        f"{result.loss_kind} loss, {result.precision}: "
        + ("converged" if result.converged else "NOT converged")
    )
    for note in result.notes:
        print(f"note: {note}")
    print(format_table([_group_row(g) for g in result.groups]))
    for g in result.groups:
        print(f"\n{g.collective} at {g.n_ranks} ranks: fitted vs printed bus bandwidth")
        print(format_table(_size_rows(g)))
    warn_not_converged(result.converged, result.message)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.output:
        message(f"wrote {args.output}")
    return 0


def _group_row(g) -> dict:
    return {
        "collective": g.collective,
        "ranks": g.n_ranks,
        "α (s)": g.latency_s,
        "t(0) (s)": g.base_latency_s,
        "β (GB/s)": g.bandwidth / 1e9,
        "busbw (GB/s)": g.busbw / 1e9,
        "factor": g.factor,
        "nominal": g.nominal_factor,
        "efficiency": g.efficiency,
        "R²": g.r2,
        "MAPE %": g.mape,
    }


def _size_rows(g) -> list[dict]:
    """One row per message size, in one grouped pass (a mask per size was quadratic: a log
    of 10⁵ sizes ran past two minutes after the fit was done)."""
    rows = g.rows
    sizes, group = np.unique(rows["message_bytes"], return_inverse=True)

    def mean(values, mask=None):
        weights = np.ones(group.size) if mask is None else mask.astype(float)
        total = np.bincount(
            group, weights=np.asarray(values, float) * weights, minlength=sizes.size
        )
        n = np.bincount(group, weights=weights, minlength=sizes.size)
        return np.divide(total, n, out=np.full(sizes.size, np.nan), where=n > 0)

    first = np.full(sizes.size, -1)
    first[group[::-1]] = np.arange(group.size)[::-1]  # the first row of each size
    time = mean(rows["time_s"])
    error = mean(np.abs(rows["time_s_fit"] / rows["time_s"] - 1.0))
    placements = {
        label: mean(rows["busbw_bytes_per_s"], rows["placement"] == placement)
        for placement, label in (("out_of_place", "busbw oop"), ("in_place", "busbw ip"))
    }
    out = []
    for k, size in enumerate(sizes):
        row = {"bytes": int(round(size)), "time (us)": float(time[k]) * 1e6}
        row["fit (us)"] = float(rows["time_s_fit"][first[k]]) * 1e6
        for label, values in placements.items():
            row[label] = None if np.isnan(values[k]) else float(values[k]) / 1e9
        row["busbw fit"] = float(rows["busbw_fit_bytes_per_s"][first[k]]) / 1e9
        row["error %"] = float(error[k]) * 100.0
        out.append(row)
    return out


# Options of `perfmodel fit` ----------------------------------------------------------------


def uses_collectives(args) -> bool:
    return bool(getattr(args, "with_collective", None) or getattr(args, "collective_fit", None))


def link_model(args, data):
    """data_parallel, across nodes when the CSV has gpus_per_node and crosses it."""
    if args.model not in ("auto", "data_parallel"):
        raise InputError(
            "--with-collective and --collective-fit need a model with an all-reduce term: "
            f"--model data_parallel (or auto), got {args.model!r}"
        )
    per_node = data.config.get("gpus_per_node")
    hierarchical = per_node is not None and bool(np.any(data.gpus > per_node))
    return data_parallel(weak=args.weak_scaling, hierarchical=hierarchical)


def shipped_log(name: str) -> str:
    """`name` itself when it is a file, else the shipped nccl-tests log it names
    (``nccl_tests_44_2x2080ti``, as ``fit-collective --dataset`` takes), else `name` (whose
    reading then says it is missing)."""
    if os.path.exists(name) or os.sep in name:
        return name
    shipped = datasets_dir() / "nccl" / f"{name.removesuffix('.log')}.log"
    return str(shipped) if shipped.is_file() else name


def fit_with_collectives(args, data, fix: dict, bounds: dict):
    """The fit asked for by --with-collective or --collective-fit.

    Returns:
        ``(FitResult, extra)``: `extra` goes into the JSON output and the fit file.
    """
    if args.with_collective and args.collective_fit:
        raise InputError("give either --with-collective or --collective-fit, not both")
    if args.starts < 1:
        raise InputError(f"--starts must be ≥ 1, got {args.starts}")
    model = link_model(args, data)
    options = dict(loss=args.loss or "log", bounds=bounds, n_starts=args.starts, seed=args.seed)
    if args.with_collective:
        try:
            joint = fit_joint(
                model,
                data,
                [shipped_log(name) for name in args.with_collective],
                weight=args.collective_weight,
                n_ranks=args.collective_ranks,
                fix=fix,
                **options,
            )
        except InputError as error:
            raise cli_hints(error, "--collective-ranks") from None
        return joint.fit, {"joint": joint.to_dict()}
    collective = load_collective_fit(args.collective_fit)
    try:
        links = link_parameters(collective, model, gpus_per_node=gpus_per_node_of(data, None))
    except InputError as error:  # name the file whose values it read
        raise InputError(f"{args.collective_fit}: {error.template}") from None
    twice = sorted(set(links) & set(fix))
    if twice:
        raise InputError(
            f"--fix {', '.join(twice)} and --collective-fit {args.collective_fit} both set "
            "it; drop one"
        )
    result = fit(model, data, fix={**fix, **links}, **options)
    return result, {"collective_fit": {"file": args.collective_fit, "fixed": links}}


def print_collective_extra(extra: dict) -> None:
    """The text lines `fit` adds after its table for a joint or fixed-from fit."""
    if "collective_fit" in extra:
        fixed = extra["collective_fit"]["fixed"]
        print(f"\nfixed from {extra['collective_fit']['file']}:")
        print(format_table([{"parameter": k, "value": v} for k, v in fixed.items()]))
    if "joint" in extra:
        joint = extra["joint"]
        print(
            f"\nnccl-tests measurements fitted jointly ({', '.join(joint['sources'])}; term "
            f"{joint['term']!r}, weight {joint['weight']:g}, gpus_per_node "
            f"{joint['gpus_per_node']:g}):"
        )
        print(format_table(joint["groups"]))
        for note in joint["notes"]:
            print(f"note: {note}")
