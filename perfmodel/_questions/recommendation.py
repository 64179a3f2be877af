"""What `recommend` returns: the count worth buying, the alternatives, and their text."""

import dataclasses
import math

from .._jsontext import finite_or_null
from .._levels import level_text
from .._text import brief, counted, wrap
from .measured import CHECKED_AHEAD
from .query import DiminishingReturns, GPU_BATCH, Optimum


def one_gpu_words(gap: float, runs: int = 1) -> str:
    """How the model's 1-GPU time compares with the one measured, whose relative
    difference is `gap`: ``"11.9% longer than the one measured"``, or as a ratio past a
    factor 2 (``"3.2e+04× the one measured"``; a percentage of 200 digits said nothing).
    With `runs` > 1 one-GPU runs the gap is against their median: "the median of the 2
    measured" (newcomer review of 2026-12-07)."""
    one = "the one measured" if runs <= 1 else f"the median of the {runs} measured"
    ratio = 1.0 + gap
    if 0.5 <= ratio <= 2.0:
        return f"{abs(gap):.1%} {'longer' if gap > 0 else 'shorter'} than {one}"
    if ratio <= 0.0:  # below float64's resolution of the measured time
        return f"shorter than {one} by more than 10¹⁶×"
    if not math.isfinite(ratio):  # a time near 1e307 s against one of 0.3 s
        return f"longer than {one} by more than 10³⁰⁰×"
    return f"{ratio:.3g}× {one}"


def _against_measured(gap: float) -> str:
    """What the speedups are against the measured 1-GPU time: ``"11% lower"``, or a
    factor (``"3.2e+04× higher"``; the ratio 1/(1+gap) is infinite for a model 1-GPU
    time that rounds to 0 against the measured one)."""
    ratio = 1.0 + gap
    if 0.5 <= ratio <= 2.0:
        return f"{abs(1.0 / ratio - 1.0):.0%} {'lower' if gap > 0 else 'higher'}"
    if ratio > 2.0:
        return f"{ratio:.3g}× lower" if math.isfinite(ratio) else "lower by more than 10³⁰⁰×"
    return f"{1.0 / ratio:.3g}× higher" if ratio > 0.0 else "higher by more than 10¹⁶×"


def step_seconds(time_s: float | None, gpus: int | None) -> float | None:
    """Seconds per step as measured, for `time_s` per GPU batch on `gpus` GPUs (a step
    there does `gpus` GPU batches); None where either is unknown."""
    return None if time_s is None or gpus is None else time_s * gpus


# What each term's share of the step is called in a sentence (by term name).
TERM_PHRASES = {
    "serial": "the serial part",
    "constant": "the constant part",
    "coherency": "coordination between GPUs (the coherency term)",
    "allreduce": "the all-reduce",
    "input": "host-to-device input",
    "tensor": "tensor-parallel communication",
    "overlap": "the overlap",
    "scaling_loss": "the power law's loss to perfect scaling",
}
# The most GPUs one node holds in the systems the datasets come from (DGX-2: 16); a
# series measured at most this far may be one node (`Recommendation.node_size_unknown`).
ONE_NODE = 16


def term_phrase(name: str) -> str:
    """``"the all-reduce"`` for ``"allreduce"``; other terms by name."""
    return TERM_PHRASES.get(name, f"the {name} term")


@dataclasses.dataclass(frozen=True)
class Alternative:
    """Another answer than the recommendation, in one line.

    Attributes:
        kind: ``"fastest"``, ``"cheapest"``, ``"deadline"``, ``"budget"``, or the
            objective passed through to `optimal_gpus`.
        gpus: the GPU count (None when none qualifies).
        time_s, speedup, efficiency: the model there (seconds per `Recommendation.unit`:
            a step, one GPU's batch, or a throughput fit's unit of work).
        cost: cost of one such unit in `cost_unit`.
        cost_unit: ``"USD"`` (the currency given), ``"currency units"`` (a price without a
            currency) or ``"GPU-hours"`` (no price).
        sentence: the line as printed.
    """

    kind: str
    gpus: int | None
    time_s: float
    speedup: float
    efficiency: float
    cost: float | None
    cost_unit: str
    sentence: str

    def __repr__(self) -> str:
        return brief("Alternative", self.sentence)


@dataclasses.dataclass(frozen=True)
class Recommendation:
    """The GPU count worth buying and the alternatives (see `recommend`).

    Attributes:
        gpus: the count worth buying.
        time_s, speedup, efficiency: the model there (seconds per `unit`).
        level: probability of the intervals (e.g. 0.9), or None without intervals.
        gpus_interval: confidence interval of the model's count over plausible models
            (the ensemble's draws); its upper end is None when the draws go past the
            search. Where `gpus` is capped (`beyond_node`, `beyond_checked`) it is the
            interval of the count before the cap, and may lie above `gpus`.
        speedup_interval: confidence interval of the speedup at `gpus` (the curve, not
            a new measurement).
        reason: why it stops there, one sentence.
        limiting: the growing term named in `reason` (None when returns never diminish).
        limiting_share: its share of the step where returns diminish.
        overhead_share: the share of every term but parallel compute there (what does
            not shrink with more GPUs; `reason` names it when several terms make it up).
        still_speeding_up: True when returns do not diminish up to `searched`: the
            recommendation is the search limit and more measurements should come first.
        multiple_of: the step between the counts considered; gpus_per_node: the node
            size it came from, when known.
        searched: the largest count considered.
        optimum: the fastest count (`optimal_gpus` with the objective given).
        knee: the point of diminishing returns (`diminishing_returns`).
        amdahl_bound: Amdahl's bound on the speedup (None without a serial term).
        alternatives: the other answers, one line each.
        assumptions: what the answer assumed (price, currency, deadline, budget), as
            ``name → value``.
        unit: what the seconds and costs are per: ``"step"``, ``"GPU batch"`` (steps of
            a fixed per-GPU batch: the work of a step at 1 GPU), or the unit of work of a
            throughput fit.
        measured_up_to: the largest GPU count in the fit's data; a recommendation past
            it is an extrapolation and the sentence says so.
        measured_from: the smallest; a count below it (the speedup's own 1-GPU
            reference included, when 1 GPU was not measured) is an extrapolation too.
        superlinear: ``(N, efficiency)`` when the measurements themselves scale
            superlinearly (efficiency against the fewest GPUs measured above
            1 + `SUPERLINEAR` at N, the largest such), else None: the curve carries that on
            past the measurements, and the answer says so.

        beyond_node: the model's count when it lies past one node that every
            measurement fits in (`gpus` is then that node), else None.
        beyond_checked: the model's count when it lies past `CHECKED_AHEAD` × the
            largest count measured, how far ahead forecasts were checked (`gpus` is then
            the largest count within it), else None.

    Measured within one node of known size, an answer past it stops at the node
    (`beyond_node` keeps the model's count, `network_unmeasured` is True, and the reason
    asks for a two-node measurement): nothing measured says what the network between
    nodes costs, and on the 68 tables of `benchmarks/blind` predicted from one node, two
    and four nodes were missed by 8–17% (median) by every method tried
    (`benchmarks/RESULTS.md`, "Blind check"). With ``multiple_of`` smaller than the node,
    a count past it from such data gets the same.

    Likewise an answer past `CHECKED_AHEAD` × the largest count measured stops there
    (`beyond_checked`): the forecasts of `benchmarks/accuracy.py` reach that far (two
    doublings ahead), and the reason asks for a measurement there before buying more.
    """

    gpus: int
    time_s: float
    speedup: float
    efficiency: float
    level: float | None
    gpus_interval: tuple[int | None, int | None] | None
    speedup_interval: tuple[float, float] | None
    reason: str
    limiting: str | None
    limiting_share: float
    still_speeding_up: bool
    multiple_of: int
    gpus_per_node: int | None
    searched: int
    optimum: Optimum
    knee: DiminishingReturns
    amdahl_bound: float | None
    alternatives: tuple[Alternative, ...]
    assumptions: dict[str, object]
    unit: str = "step"
    measured_up_to: int = 0
    measured_from: int = 0
    superlinear: tuple[int, float] | None = None
    overhead_share: float = 0.0
    beyond_node: int | None = None
    beyond_checked: int | None = None
    one_gpu_gap: float | None = None
    one_gpu_runs: int = 1

    @property
    def sentence(self) -> str:
        """The answer in one sentence, e.g. ``Buy 8 GPUs (1 node of 8): 5.9× …``."""
        said = []  # one parenthesis: "(16 nodes of 8) (extrapolated: …)" read as two asides
        if self.gpus_per_node and self.gpus >= self.gpus_per_node:
            count = self.gpus / self.gpus_per_node
            if count == int(count):
                plural = "s" if count != 1 else ""
                said.append(f"{int(count)} node{plural} of {self.gpus_per_node}")
        if self.measured_up_to and self.gpus > self.measured_up_to:
            said.append(f"extrapolated: at most {self.measured_up_to} GPUs were measured")
        elif self.measured_from and self.gpus < self.measured_from:
            said.append(f"extrapolated: no count below {self.measured_from} GPUs was measured")
        nodes = f" ({'; '.join(said)})" if said else ""
        band = ""
        if self.speedup_interval is not None:
            lo, hi = self.speedup_interval
            band = f" ({level_text(self.level)} confidence interval {lo:.3g}–{hi:.3g}×)"
            if math.isinf(hi):  # "0–inf×" said nothing
                band = " (no confidence interval: the measurements leave a parameter free)"
            elif not (math.isfinite(lo) and math.isfinite(hi)):  # "nan–nan×"
                band = " (no confidence interval: draws of these parameters overflow)"
            elif lo < 1.0 < self.gpus:  # "Buy 2 GPUs: speedup 1.74× (… 0.455–2×)" read as sure
                band = band[:-1] + f": {self.gpus} GPUs may be slower than one)"
        # Capped below the search (`beyond_node`, `beyond_checked`), not the search limit.
        at_limit = self.still_speeding_up and self.gpus >= self.searched
        head = "Up to the search limit, buy" if at_limit else "Buy"
        return (
            f"{head} {self.gpus} GPU{'s' if self.gpus != 1 else ''}{nodes}: speedup "
            f"{self.speedup:.3g}×{band}, efficiency {self.efficiency:.0%}; {self.reason}."
        )

    @property
    def network_unmeasured(self) -> bool:
        """True when the count is past one node and no measurement is: the node size is
        known, every measured count fits in one node, and `gpus` does not."""
        node = self.gpus_per_node
        past = self.gpus if self.beyond_node is None else self.beyond_node
        return bool(node and 0 < self.measured_up_to <= node < past)

    @property
    def node_size_unknown(self) -> bool:
        """True when the count is past every measurement, every measurement could be one
        node (at most `ONE_NODE` GPUs) and the data give no node size: the answer may
        cross a network that nothing measured, and the node size would say so."""
        past = 0 < self.measured_up_to < self.gpus
        return bool(past and not self.gpus_per_node and self.measured_up_to <= ONE_NODE)

    def caveats(self) -> list[str]:
        """What the sentence leaves out and a buyer must know, one line each: a network
        that nothing measured, a node size not given, superlinear measurements."""
        out = []
        if self.network_unmeasured and self.beyond_node is None:  # else the reason says it
            out.append(
                f"past one node, unmeasured: every measurement fits in one node of "
                f"{self.gpus_per_node}, so the network between nodes is extrapolated and "
                f"the intervals past it are wide; measure 2 nodes "
                f"({2 * self.gpus_per_node} GPUs) before trusting counts past "
                f"{self.gpus_per_node}"
            )
        if self.node_size_unknown:
            out.append(
                f"no node size given: if the {self.measured_up_to} GPUs measured share one "
                "node, give its size (a gpus_per_node column, or --gpus-per-node): the "
                "answer then stops at the node and its intervals widen past it, since "
                "nothing measured shows the network between nodes"
            )
        if self.measured_from > 1 and self.gpus >= self.measured_from:
            # The 0.5× cut-off reads the speedups: against a 1-GPU time no run measured
            # (an 8–32 GPU table's model did 485/s on 1 GPU, its 8 GPUs 332/s per GPU).
            out.append(
                f"no run on fewer than {self.measured_from} GPUs was measured: the speedups "
                f"and efficiencies are against the model's 1-GPU time, extrapolated; they "
                "compare counts with each other, not with a measured single GPU"
            )
        if self.one_gpu_gap is not None:
            gap = self.one_gpu_gap
            out.append(
                f"the speedups are against the model's 1-GPU time, "
                f"{one_gpu_words(gap, self.one_gpu_runs)}: "
                f"against the measurement they are {_against_measured(gap)}"
            )
        if self.superlinear is not None:
            n, efficiency = self.superlinear
            out.append(
                f"superlinear: the measurements' efficiency reaches {efficiency:.0%} at {n} "
                f"GPUs (against {self.measured_from}), and the curve carries that on past "
                "them; check the smallest run (slow or throttled?) and whether the batch or "
                "the data per GPU changes with the count"
            )
        return out

    def lines(self) -> list[str]:
        """The sentence, the caveats, the interval of the count, then one line per
        alternative."""
        out = [self.sentence, *(f"  {line}" for line in self.caveats())]
        if self.gpus_interval is not None:
            lo, hi = self.gpus_interval
            upper = f"more than {self.searched} (the end of the search)" if hi is None else hi
            band = f"{lo} to {upper}" if lo is not None else upper  # None: every draw's too
            noun = "GPU" if band == "1 to 1" else "GPUs"
            if lo is not None and lo == hi:  # "7 to 7 GPUs" read as a typo
                band, noun = str(lo), ("GPU" if lo == 1 else "GPUs") + " (one count)"
            # The interval is the uncapped count's: under "Buy 16 GPUs" an interval of 36
            # to 4096 read as if it excluded the answer (review round 13).
            what = "the count worth buying"
            if self.uncapped is not None:
                cap = f"{CHECKED_AHEAD:g}× the largest measured"
                cap = "one node" if self.beyond_node is not None else cap
                what = (
                    f"the model's count, {counted(self.uncapped, 'GPU')}, before the cap at "
                    f"{cap} above"
                )
            out.append(f"  {what}: {level_text(self.level)} confidence interval {band} {noun}")
        alternatives = [f"  {a.sentence}" for a in self.alternatives]
        if self.optimum.objective == "cost" and alternatives:
            # Asked for the cheapest, the answer leads (review round 13: "Buy 64 GPUs"
            # opened the answer to --objective cost, whose count is 1).
            first = self.alternatives[0].sentence
            out = [first[:1].upper() + first[1:], *(f"  {line}" for line in out)]
            alternatives = alternatives[1:]
        out += alternatives
        if self.assumptions.get("max_gpus_is_global_batch"):
            out.append(
                f"  searched up to {self.searched} GPUs, the fixed global batch of "
                f"{self.searched}: past it a GPU would get less than one sample"
            )
        return out

    def summary(self, width: int | None = 100) -> str:
        """The lines, wrapped at `width` columns (None: one line each)."""
        return wrap("\n".join(self.lines()), width)

    def __repr__(self) -> str:
        return brief("Recommendation", self.sentence)

    @property
    def uncapped(self) -> int | None:
        """The model's count where `gpus` is capped below it (`beyond_node`, else
        `beyond_checked`), else None."""
        return self.beyond_node if self.beyond_node is not None else self.beyond_checked

    def to_dict(self) -> dict:
        """The JSON ``recommendation`` object (finite floats or None). Its interval's
        ``gpus`` brackets the count ``gpus_of`` names: the recommendation's, or the
        model's count before the cap (a JSON reader saw ``gpus`` 8 with an interval of
        24 and up, review of 2026-12-06)."""
        interval = None
        if self.level is not None:
            interval = {
                "level": self.level,
                "kind": "confidence",
                "gpus_of": self.gpus if self.uncapped is None else self.uncapped,
                "gpus": None if self.gpus_interval is None else list(self.gpus_interval),
                "speedup_of": self.gpus,  # the speedup's count; gpus_of is the count's
                "speedup": None if self.speedup_interval is None else list(self.speedup_interval),
            }
        document = finite_or_null(
            {
                "gpus": self.gpus,
                "speedup": self.speedup,
                "efficiency": self.efficiency,
                "time_s": self.time_s,
                "reason": self.reason,
                "sentence": self.sentence,
                "limiting_term": self.limiting,
                "limiting_share": self.limiting_share,
                "overhead_share": self.overhead_share,
                "still_speeding_up": self.still_speeding_up,
                "multiple_of": self.multiple_of,
                "gpus_per_node": self.gpus_per_node,
                "criterion": self.knee.criterion,
                "interval": interval,
                "unit": self.unit,
                "measured_up_to": self.measured_up_to,
                "measured_from": self.measured_from,
                "network_unmeasured": self.network_unmeasured,
                "beyond_node": self.beyond_node,
                "beyond_checked": self.beyond_checked,
                "node_size_unknown": self.node_size_unknown,
                "one_gpu_gap": self.one_gpu_gap,
                "superlinear": (
                    None
                    if self.superlinear is None
                    else {"gpus": self.superlinear[0], "efficiency": self.superlinear[1]}
                ),
                "assumptions": dict(self.assumptions),
                "alternatives": [
                    {k: v for k, v in dataclasses.asdict(a).items()} for a in self.alternatives
                ],
            }
        )
        if self.unit == GPU_BATCH:  # and per step as measured, as `predict` gives it
            for entry in (document, *document["alternatives"]):
                entry["step_time_s"] = step_seconds(entry["time_s"], entry["gpus"])
        return document
