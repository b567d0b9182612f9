"""Pilot options checked before anything is submitted: the pure core.

Every class of pilot a run may start (a template's ``resources=``, overridden by the constant
Slurm resources of each rule that uses it) becomes the sbatch command line its pilots would be
submitted with, and is judged three ways before any job runs:

1. by its spelling alone (:func:`static_problems`): known resource names, option values of the
   right form (``runtime`` in minutes or a Slurm time, positive integers, gres and gpu syntax),
   and ``slurm_extra`` free of the options the executor manages;
2. against what the cluster reports (:func:`cluster_problems`): the partition exists, the gres
   is one the cluster defines, the runtime fits the partition's ``MaxTime``;
3. by Slurm itself (``sbatch --test-only``, run through :mod:`.slurm`), whose refusal
   :func:`rejection_problem` turns into the option it concerns and a fix.

Each problem is one line naming the template, the option and the fix. Warnings follow what
``snakemake-executor-plugin-slurm`` warns about: Snakemake running inside a Slurm job, and
pilots without ``runtime``/``mem_mb`` where the partition would impose a default.

Nothing here runs a process: the Slurm seam is :mod:`.slurm`, its answers are parsed here.
"""

import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from .slurm import MANAGED_OPTIONS, PILOT_RESOURCES, sbatch_options

# ---- what is checked ------------------------------------------------------------------------


@dataclass(frozen=True)
class PilotClass:
    """One kind of pilot a run may submit: a template's resources as one or more rules
    override them. ``sources`` says where each resource was set (``resources= of the
    template`` or ``rule NAME``), for the fix of a problem."""

    template: str
    resources: dict[str, Any]
    rules: tuple[str, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)

    def label(self) -> str:
        used = f" (pilots of rule{'s' if len(self.rules) > 1 else ''} " if self.rules else ""
        return f"sticky template {self.template!r}" + (
            f"{used}{', '.join(self.rules)})" if used else ""
        )

    def source(self, resource: str) -> str:
        return self.sources.get(resource, f"resources= of @template({self.template!r})")


@dataclass(frozen=True)
class Problem:
    """A pilot option Slurm would refuse (or never run): where it is set and how to fix it."""

    pilot: PilotClass
    option: str
    why: str
    fix: str

    def line(self) -> str:
        return f"{self.pilot.label()}: {self.option}: {self.why}; {self.fix}"


@dataclass(frozen=True)
class Partition:
    """A Slurm partition as ``scontrol show partition -o`` describes it. Times in minutes
    (None: no limit / no default), memory in MB (None: no default)."""

    name: str
    default: bool = False
    state: str = "UP"
    max_time: Optional[int] = None
    default_time: Optional[int] = None
    def_mem_per_cpu: Optional[int] = None
    def_mem_per_node: Optional[int] = None


@dataclass(frozen=True)
class ClusterFacts:
    """What the checks need to know about the cluster, from ``scontrol``."""

    partitions: dict[str, Partition]
    gres_types: tuple[str, ...] = ()

    def default_partition(self) -> Optional[Partition]:
        return next((p for p in self.partitions.values() if p.default), None)


# ---- 1. spelling ---------------------------------------------------------------------------

# Stock plugin's own patterns (snakemake_executor_plugin_slurm.utils.set_gres_string).
GRES_RE = re.compile(r"^[a-zA-Z0-9_]+(:[a-zA-Z0-9_.]+)?(:\d+[TGM]?)?$")
GPU_MODEL_RE = re.compile(r"^[a-zA-Z0-9_.]+$")
# Slurm time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S.
TIME_RE = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")


def slurm_minutes(value: Any) -> Optional[int]:
    """Minutes of a runtime (an integer of minutes or a Slurm time string), rounded up;
    None if it is neither. ``UNLIMITED``/``INFINITE`` are not runtimes."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, float):
        return int(-(-value // 1)) if value > 0 else None
    text = str(value).strip()
    m = TIME_RE.match(text)
    if not m:
        return None
    days, a, b, c = m.groups()
    if days is not None:  # D-H[:M[:S]]
        seconds = int(days) * 86400 + int(a) * 3600 + int(b or 0) * 60 + int(c or 0)
    elif c is not None:  # H:M:S
        seconds = int(a) * 3600 + int(b) * 60 + int(c)
    elif b is not None:  # M:S
        seconds = int(a) * 60 + int(b)
    else:  # M
        seconds = int(a) * 60
    return -(-seconds // 60) if seconds > 0 else None


def _positive_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value > 0
    return isinstance(value, str) and value.strip().isdigit() and int(value) > 0


def _extra_option_name(arg: str) -> Optional[str]:
    """The managed option an argument of slurm_extra sets, in any spelling sbatch accepts:
    ``--partition=x``, ``--partition x``, ``-p x``, ``-px``; None if it sets none."""
    if arg.startswith("--"):
        name = arg.split("=", 1)[0]
        return name if name in MANAGED_OPTIONS else None
    if arg.startswith("-") and len(arg) >= 2:
        short = arg[:2]
        return short if short in MANAGED_OPTIONS else None
    return None


def static_problems(pilot: PilotClass) -> tuple[list[str], list[Problem]]:
    """The pilot's sbatch options and every problem its resources have by their form alone."""
    res = pilot.resources
    problems: list[Problem] = []

    def bad(key: str, why: str, fix: str) -> None:
        shown = f"{key}={res[key]!r}" if key in res else key
        problems.append(
            Problem(pilot, shown, why, f"{fix} (set in {pilot.source(key)})" if key else fix)
        )

    unknown = sorted(set(res) - set(PILOT_RESOURCES))
    for key in unknown:
        bad(
            key,
            "not a pilot resource",
            f"use one of {', '.join(PILOT_RESOURCES)} (the names of "
            "snakemake-executor-plugin-slurm)",
        )
    if (
        "runtime" in res
        and res["runtime"] not in (None, "")
        and slurm_minutes(res["runtime"]) is None
    ):
        bad(
            "runtime",
            "not a time Slurm accepts",
            "give minutes (e.g. 60) or a Slurm time (e.g. '1:00:00', '2-00:00:00')",
        )
    for key in ("mem_mb", "mem_mb_per_cpu", "cpus_per_task", "gpu"):
        if res.get(key) not in (None, "", 0) and not _positive_int(res[key]):
            unit = {"mem_mb": "megabytes", "mem_mb_per_cpu": "megabytes per CPU"}.get(key, "")
            bad(
                key, "not a positive integer", f"give a whole number{' of ' + unit if unit else ''}"
            )
    if res.get("gres") not in (None, ""):
        for item in str(res["gres"]).split(","):
            if not GRES_RE.match(item.strip()):
                bad(
                    "gres",
                    f"{item!r} is not a gres specification",
                    "write NAME, NAME:COUNT or NAME:TYPE:COUNT (e.g. 'gpu:2', 'gpu:a100:1')",
                )
                break
    if res.get("gpu_model") not in (None, ""):
        if not GPU_MODEL_RE.match(str(res["gpu_model"])):
            bad("gpu_model", "not a GPU model name", "write the model alone, e.g. 'a100'")
        if not res.get("gpu"):
            bad("gpu_model", "given without gpu", "set gpu to the number of GPUs (e.g. gpu=1)")
    if res.get("gpu") and res.get("gres") and "gpu" in str(res["gres"]):
        bad("gres", "asks for GPUs a second time (gpu is set too)", "use gpu (and gpu_model) alone")
    extra = res.get("slurm_extra")
    extra_args: list[str] = []
    if extra not in (None, ""):
        try:
            extra_args = shlex.split(str(extra))
        except ValueError as e:
            bad("slurm_extra", f"cannot be split into arguments ({e})", "balance its quotes")
        for arg in extra_args:
            name = _extra_option_name(arg)
            if name is not None:
                bad(
                    "slurm_extra",
                    f"sets {name}, which the sticky executor manages",
                    "use the matching resource instead (slurm_partition, runtime, mem_mb, "
                    "cpus_per_task, gpu, gres, constraint, qos, slurm_account) or drop it",
                )
            elif arg.startswith("-") and not arg.startswith("--") and len(arg) == 1:
                bad("slurm_extra", "holds a lone '-'", "remove it")
    if problems:
        return [], problems
    try:
        return sbatch_options(res), []
    except ValueError as e:  # a case the checks above missed: still one line, never a crash
        return [], [Problem(pilot, "resources", str(e), "fix the template's resources=")]


# ---- 2. the cluster's facts -----------------------------------------------------------------


def parse_partitions(scontrol_output: str) -> dict[str, Partition]:
    """``scontrol show partition -o`` (one partition per line, KEY=VALUE fields)."""
    partitions: dict[str, Partition] = {}
    for line in scontrol_output.splitlines():
        fields = dict(tok.split("=", 1) for tok in line.split() if "=" in tok)
        name = fields.get("PartitionName")
        if not name:
            continue
        partitions[name] = Partition(
            name=name,
            default=fields.get("Default", "NO") == "YES",
            state=fields.get("State", "UP"),
            max_time=_limit_minutes(fields.get("MaxTime")),
            default_time=_limit_minutes(fields.get("DefaultTime")),
            def_mem_per_cpu=_limit_mb(fields.get("DefMemPerCPU")),
            def_mem_per_node=_limit_mb(fields.get("DefMemPerNode")),
        )
    return partitions


def parse_gres_types(config_output: str) -> tuple[str, ...]:
    """``GresTypes`` of ``scontrol show config`` (e.g. ``GresTypes = gpu,shard``)."""
    for line in config_output.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "GresTypes":
            value = value.strip()
            if value in ("", "(null)"):
                return ()
            return tuple(v.strip() for v in value.split(",") if v.strip())
    return ()


def _limit_minutes(value: Optional[str]) -> Optional[int]:
    if value is None or value.upper() in ("UNLIMITED", "INFINITE", "NONE", "(NULL)"):
        return None
    return slurm_minutes(value)


def _limit_mb(value: Optional[str]) -> Optional[int]:
    if value is None or not value.isdigit() or int(value) == 0:
        return None  # UNLIMITED, absent, or 0 (no default)
    return int(value)


def _partition_of(pilot: PilotClass, facts: ClusterFacts) -> Optional[Partition]:
    name = pilot.resources.get("slurm_partition")
    if name in (None, ""):
        return facts.default_partition()
    return facts.partitions.get(str(name))


def cluster_problems(pilot: PilotClass, facts: ClusterFacts) -> list[Problem]:
    """Problems of a well-formed pilot on this cluster (partition, gres, time limit)."""
    res = pilot.resources
    problems: list[Problem] = []
    name = res.get("slurm_partition")
    known = ", ".join(sorted(facts.partitions)) or "none"
    if name not in (None, "") and facts.partitions and str(name) not in facts.partitions:
        problems.append(
            Problem(
                pilot,
                f"slurm_partition={name!r} (--partition={name})",
                f"invalid partition: this cluster has {known}",
                f"set slurm_partition to one of them (in {pilot.source('slurm_partition')})",
            )
        )
    if name in (None, "") and facts.partitions and facts.default_partition() is None:
        problems.append(
            Problem(
                pilot,
                "slurm_partition (not set)",
                f"the cluster has no default partition (partitions: {known})",
                f"set slurm_partition in {pilot.source('slurm_partition')}",
            )
        )
    wanted = []
    if res.get("gpu"):
        wanted.append(("gpu", "gpu"))
    for item in str(res.get("gres") or "").split(","):
        if item.strip():
            wanted.append(("gres", item.strip().split(":")[0]))
    for key, gres in wanted:
        if gres not in facts.gres_types:
            defined = ", ".join(facts.gres_types) or "none"
            problems.append(
                Problem(
                    pilot,
                    f"{key}={res[key]!r}",
                    f"this cluster defines no gres {gres!r} (GresTypes: {defined})",
                    f"remove {key} or use a gres the cluster defines (in {pilot.source(key)})",
                )
            )
    partition = _partition_of(pilot, facts)
    minutes = slurm_minutes(res["runtime"]) if res.get("runtime") not in (None, "") else None
    if partition is not None and minutes and partition.max_time and minutes > partition.max_time:
        problems.append(
            Problem(
                pilot,
                f"runtime={res['runtime']!r} ({minutes} min)",
                f"exceeds partition {partition.name}'s MaxTime of {partition.max_time} min, "
                "so the pilot would never start",
                f"lower runtime to at most {partition.max_time} or choose another partition "
                f"(in {pilot.source('runtime')})",
            )
        )
    return problems


# ---- 3. Slurm's own verdict ------------------------------------------------------------------

# (pattern in sbatch's refusal, the resources it may concern, first match wins)
_REFUSALS: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(r"partition", re.I), ("slurm_partition",)),
    (re.compile(r"account|association", re.I), ("slurm_account",)),
    (re.compile(r"\bqos\b|quality of service", re.I), ("qos",)),
    (re.compile(r"gres|generic resource|gpu", re.I), ("gres", "gpu", "gpu_model")),
    (re.compile(r"feature|constraint", re.I), ("constraint",)),
    (re.compile(r"time limit", re.I), ("runtime",)),
    (re.compile(r"memory", re.I), ("mem_mb", "mem_mb_per_cpu")),
    (re.compile(r"processors|cpu count|cpus", re.I), ("cpus_per_task",)),
    # No node has that much of something: name every size the pilot asks for.
    (
        re.compile(r"node configuration is not available", re.I),
        ("cpus_per_task", "mem_mb", "mem_mb_per_cpu", "gpu", "gres", "constraint"),
    ),
]
_UNRECOGNIZED = re.compile(r"(?:unrecognized|invalid|unknown) option[^'\"]*['\"]?([^'\"\s]+)", re.I)


def rejection_problem(pilot: PilotClass, options: list[str], message: str) -> Problem:
    """``sbatch --test-only``'s refusal of the pilot's options, as the option it concerns."""
    said = " ".join(
        line.strip().removeprefix("sbatch: error: ").removeprefix("sbatch: ")
        for line in message.strip().splitlines()
        if line.strip() and not line.lower().startswith("try ")
    )
    res = pilot.resources
    m = _UNRECOGNIZED.search(message)
    if m and res.get("slurm_extra"):
        return Problem(
            pilot,
            f"slurm_extra={res['slurm_extra']!r}",
            f"sbatch refuses it: {said}",
            f"remove or correct {m.group(1)} (in {pilot.source('slurm_extra')}; see sbatch --help)",
        )
    for pattern, keys in _REFUSALS:
        if not pattern.search(said):
            continue
        present = [k for k in keys if res.get(k) not in (None, "")]
        if present:
            named = ", ".join(f"{k}={res[k]!r}" for k in present)
            where = "; ".join(sorted({pilot.source(k) for k in present}))
            return Problem(
                pilot,
                named,
                f"sbatch refuses it: {said}",
                f"correct or remove {' or '.join(present)} (in {where})",
            )
    shown = " ".join(options) or "(no options: the cluster's defaults)"
    return Problem(
        pilot,
        f"sbatch {shown}",
        f"sbatch refuses it: {said}",
        "correct the template's resources= (try the same options with sbatch --test-only)",
    )


# ---- warnings ------------------------------------------------------------------------------


def allocation_warning(environ: Mapping[str, str]) -> Optional[str]:
    """Snakemake started inside a Slurm job (an ``salloc``/``sbatch`` allocation)."""
    job = environ.get("SLURM_JOB_ID")
    if not job:
        return None
    inherited = sorted(k for k in environ if k.startswith("SLURM_") and k != "SLURM_CONF")
    return (
        f"sticky: Snakemake runs inside Slurm job {job} ({len(inherited)} SLURM_* variables "
        "set). This is not recommended (run Snakemake on the login node instead); pilots "
        "are submitted without this job's SLURM_* variables, so they do not inherit its "
        "limits."
    )


def resource_warnings(pilot: PilotClass, facts: Optional[ClusterFacts]) -> list[str]:
    """Pilots without runtime or memory where the partition would impose a default.

    Without facts about the partition (``scontrol`` did not answer) the stock Slurm plugin's
    warnings apply as it gives them: nothing is known about the defaults."""
    res = pilot.resources
    out: list[str] = []
    partition = _partition_of(pilot, facts) if facts is not None else None
    has_time = res.get("runtime") not in (None, "")
    has_mem = any(res.get(k) not in (None, "") for k in ("mem_mb", "mem_mb_per_cpu"))
    if not has_time:
        if facts is None:
            out.append("no runtime given; this might or might not work on this cluster")
        elif partition is not None and (partition.default_time or partition.max_time):
            limit = partition.default_time or partition.max_time
            out.append(
                f"no runtime given: partition {partition.name} ends its pilots after "
                f"{limit} min ({'DefaultTime' if partition.default_time else 'MaxTime'}), and "
                "the invocations they run then are requeued"
            )
    if not has_mem:
        if facts is None:
            out.append("no mem_mb given; this might or might not work on this cluster")
        elif partition is not None and (partition.def_mem_per_cpu or partition.def_mem_per_node):
            default = (
                f"{partition.def_mem_per_cpu} MB per CPU"
                if partition.def_mem_per_cpu
                else f"{partition.def_mem_per_node} MB"
            )
            out.append(
                f"no mem_mb given: partition {partition.name} gives its pilots {default}, "
                "for the template's state and every invocation together"
            )
    return [
        f"{pilot.label()}: {w}; set {'runtime' if 'runtime' in w else 'mem_mb'} in "
        f"{pilot.source('runtime' if 'runtime' in w else 'mem_mb')}"
        for w in out
    ]


# ---- the whole check -------------------------------------------------------------------------


@dataclass
class CheckResult:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def message(self) -> str:
        n = len(self.problems)
        head = (
            f"{n} sticky pilot option{'s' if n > 1 else ''} would be refused by Slurm; "
            "nothing was submitted:"
        )
        return "\n".join([head, *("  " + p.line() for p in self.problems)])


def check_pilots(
    pilots: Iterable[PilotClass],
    facts: Optional[ClusterFacts],
    trial_submit: Callable[[list[str]], Optional[str]],
    environ: Mapping[str, str],
) -> CheckResult:
    """Judge every pilot class; ``trial_submit(options)`` is Slurm's verdict on an sbatch
    command line (None: accepted, else its refusal), asked only of classes without other
    problems."""
    result = CheckResult()
    warning = allocation_warning(environ)
    if warning:
        result.warnings.append(warning)
    for pilot in pilots:
        options, problems = static_problems(pilot)
        if not problems and facts is not None:
            problems = cluster_problems(pilot, facts)
        if not problems:
            refusal = trial_submit(options)
            if refusal is not None:
                problems = [rejection_problem(pilot, options, refusal)]
        result.problems.extend(problems)
        if not problems:
            result.warnings.extend(resource_warnings(pilot, facts))
    return result


def pilot_classes(
    templates: Mapping[str, Mapping[str, Any]],
    rule_resources: Iterable[tuple[str, str, Mapping[str, Any]]],
    partitions: Mapping[str, list[str]],
) -> list[PilotClass]:
    """The pilot classes of a workflow: each template's own resources, and each rule's
    overrides of them (``rule_resources``: rule name, template, the rule's constant pilot
    resources). Classes with the same resources are one, listing all their rules."""
    classes: dict[tuple[str, str], PilotClass] = {}

    def add(template: str, merged: dict[str, Any], sources: dict[str, str], rule: str) -> None:
        key = (template, repr(sorted(merged.items(), key=lambda kv: kv[0])))
        old = classes.get(key)
        rules = (old.rules if old else ()) + ((rule,) if rule else ())
        classes[key] = PilotClass(
            template, merged, rules, {**sources, **(old.sources if old else {})}
        )

    used: set[str] = set()
    for rule, template, overrides in rule_resources:
        own = dict(templates.get(template, {}))
        sources: dict[str, str] = {}
        for k, v in overrides.items():
            own[k] = v
            sources[k] = f"the resources of rule {rule}"
        if partitions.get(template) and "slurm_partition" not in own:
            own["slurm_partition"] = partitions[template][0]
            sources["slurm_partition"] = f"partitions= of @template({template!r})"
        add(template, own, sources, rule)
        used.add(template)
    for template, resources in templates.items():
        if template in used:
            continue
        own = dict(resources)
        sources = {}
        if partitions.get(template) and "slurm_partition" not in own:
            own["slurm_partition"] = partitions[template][0]
            sources["slurm_partition"] = f"partitions= of @template({template!r})"
        add(template, own, sources, "")
    return list(classes.values())


def check_before_submit(
    pilots: list[PilotClass], environ: Mapping[str, str], seam: Any = None
) -> CheckResult:
    """The whole check against the real cluster, through the Slurm seam (:mod:`.slurm`;
    ``seam`` replaces it in tests). Facts ``scontrol`` cannot give are skipped (and the
    stock plugin's warnings given), Slurm's own verdict is still asked."""
    from ._pilot_env import pilot_environment

    if seam is None:
        from . import slurm as seam
    try:
        facts: Optional[ClusterFacts] = ClusterFacts(
            parse_partitions(seam.partitions_output()),
            parse_gres_types(seam.config_output()),
        )
    except seam.SlurmError:
        facts = None
    submit_env = pilot_environment(environ).submit_env
    return check_pilots(
        pilots, facts, lambda options: seam.trial_submit(options, env=submit_env), environ
    )
