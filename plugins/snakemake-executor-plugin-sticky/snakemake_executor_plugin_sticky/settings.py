"""Settings of ``--executor sticky``: command-line flags ``--sticky-<name>``, profile keys
``sticky-<name>``.

No ``from __future__ import annotations`` and no ``X | None`` here: Snakemake reads these
annotations at runtime to build its argument parser, and either spelling breaks every
``snakemake`` command in the environment.
"""

from dataclasses import dataclass, field
from typing import Optional, Union

from snakemake_interface_executor_plugins.settings import ExecutorSettingsBase

from ._mode import apply_backend

DEFAULT_MAX_PILOTS = 4
"""Pilots at once when neither --sticky-max-pilots nor --sticky-max-workers says."""


@dataclass
class ExecutorSettings(ExecutorSettingsBase):
    backend: str = field(
        default="local",
        metadata={
            "help": "Where workers run: local (processes on this machine, the default) or "
            "slurm (each worker a Slurm pilot job, submitted with sbatch using its "
            "template's resources=...). With slurm, every job that does not opt in is "
            "submitted to Slurm by snakemake-executor-plugin-slurm, exactly as under "
            "--executor slurm (localrules stay local; --jobs bounds the jobs at once).",
            "env_var": False,
            "required": False,
            "choices": ["local", "slurm"],
        },
    )
    pilot_start_timeout: float = field(
        default=300.0,
        metadata={
            "help": "Seconds a worker may take to start and connect (a Slurm pilot: to leave "
            "the queue) before it counts as failed (default 300). After 3 failures in a row "
            "the waiting jobs fail with the reason (e.g. the pilot's sbatch options and "
            "Slurm's pending reason).",
            "env_var": False,
            "required": False,
        },
    )
    max_workers: Optional[int] = field(
        default=None,
        metadata={
            "help": "Most local sticky worker processes at once. Default: the --cores limit. "
            "Workers start lazily, one per waiting invocation, up to this number. (Slurm "
            "pilots: --sticky-max-pilots.)",
            "env_var": False,
            "required": False,
        },
    )
    max_pilots: Optional[str] = field(
        default=None,
        metadata={
            "help": "With --sticky-backend slurm: most pilot jobs at once, separate from "
            "--jobs. N (all templates together), optionally followed by per-template "
            "limits: '8,train=2,embed=1' (at most 8 pilots, of which at most 2 for template "
            f"train). Default: --sticky-max-workers if set, else {DEFAULT_MAX_PILOTS}. Pilots "
            "start lazily, one per waiting invocation, up to these limits.",
            "env_var": False,
            "required": False,
        },
    )
    slurm_options: Optional[str] = field(
        default=None,
        metadata={
            "help": "With --sticky-backend slurm: settings of snakemake-executor-plugin-slurm "
            "for the jobs that do not opt in, as its --slurm-NAME flags without the prefix, "
            "space-separated NAME=VALUE: 'init-seconds-before-status-checks=2 "
            "array-jobs=all logdir=slurm-logs'. Default: the plugin's defaults.",
            "env_var": False,
            "required": False,
        },
    )
    idle_timeout: float = field(
        default=300.0,
        metadata={
            "help": "Seconds a worker may stay idle before it tears its states down and "
            "exits (default 300). All workers stop at the end of the run regardless.",
            "env_var": False,
            "required": False,
        },
    )
    listen_address: str = field(
        default="127.0.0.1",
        metadata={
            "help": "Address the manager listens on for its workers (default 127.0.0.1, "
            "loopback only). Use 0.0.0.0 or a node address only where workers run on other "
            "hosts; every connection must still prove the per-run secret.",
            "env_var": False,
            "required": False,
        },
    )
    port: int = field(
        default=0,
        metadata={
            "help": "TCP port for the manager (default 0: any free port).",
            "env_var": False,
            "required": False,
        },
    )
    heartbeat_timeout: float = field(
        default=20.0,
        metadata={
            "help": "Seconds a connected worker may stay stopped (SIGSTOP) or unreachable (no "
            "heartbeat: its node, pilot or network gone) before it counts as lost and its "
            "invocation is requeued (default 20; at least 2: workers beat every second). A "
            "worker running a long C call that holds the GIL is alive; a worker whose "
            "process exits is noticed at once.",
            "env_var": False,
            "required": False,
        },
    )
    max_requeues: int = field(
        default=3,
        metadata={
            "help": "How often one invocation may be requeued after losing its worker before "
            "it fails (default 3). Requeues do not consume --retries. A worker lost while "
            "building the invocation's template does not count; 3 such losses in a row "
            "fail the template.",
            "env_var": False,
            "required": False,
        },
    )
    checkpoints: Optional[str] = field(
        default=None,
        metadata={
            "help": "A checkpoint store directory (local or on a shared file system; created "
            "if new). A job whose provenance key (code, params, wildcards, config, input "
            "content, template, software) is in the store is restored instead of run; every "
            "successful job is stored. Default: no checkpoints.",
            "env_var": False,
            "required": False,
        },
    )
    checkpoints_plan: bool = field(
        default=False,
        metadata={
            "help": "With --sticky-checkpoints: print which jobs would be restored from the "
            "store and which would run, with the reason (the key components that changed), "
            "then stop without running or restoring anything. (Snakemake's own --dry-run "
            "replaces the executor, so it cannot see the store.)",
            "env_var": False,
            "required": False,
        },
    )
    checkpoints_key: Optional[str] = field(
        default=None,
        metadata={
            "help": "With --sticky-checkpoints: a file holding an HMAC key (at least 32 "
            "characters, mode 600) shared by the sites that may write the store. Every "
            "manifest stored is signed with it, and only manifests whose signature checks are "
            "restored (the others' jobs run). Use it when writers without the key can reach "
            "the store.",
            "env_var": False,
            "required": False,
        },
    )
    checkpoints_roots: Optional[str] = field(
        default=None,
        metadata={
            "help": "With --sticky-checkpoints: site roots, NAME=PATH[,NAME=PATH...]. A file "
            "outside the working directory under PATH counts in keys as <NAME>/its/path, so "
            "sites that keep the same data under different paths (data=/data here, "
            "data=/scratch/data there) share keys. Other outside files count by their "
            "absolute path.",
            "env_var": False,
            "required": False,
        },
    )
    templates: Optional[str] = field(
        default=None,
        metadata={
            "help": "Path of the sticky templates file (default: sticky_templates.py beside "
            "the Snakefile, or $STICKY_TEMPLATES).",
            "env_var": False,
            "required": False,
        },
    )

    def __post_init__(self) -> None:
        # Whether Snakemake treats this run as cluster execution (--jobs, localrules, remote
        # jobs) depends on the backend: see _mode.
        apply_backend(self.backend)


MIN_HEARTBEAT_TIMEOUT = 2.0
"""Workers beat every second: a shorter timeout would lose healthy workers between beats."""


def settings_problems(settings: ExecutorSettings) -> list[str]:
    """Every invalid setting, one line each: the flag, the value seen, what it must be.

    Pure (no sockets): whether a valid address can be bound is checked where it is bound."""
    problems: list[str] = []

    def bad(flag: str, value: object, must: str) -> None:
        problems.append(f"--sticky-{flag} {value}: {must}")

    if settings.max_workers is not None and settings.max_workers < 1:
        bad(
            "max-workers",
            settings.max_workers,
            "must be at least 1 (leave it unset to use the --cores limit)",
        )
    for flag, value, default in [
        ("idle-timeout", settings.idle_timeout, 300),
        ("pilot-start-timeout", settings.pilot_start_timeout, 300),
    ]:
        if not _number(value) or value <= 0:
            bad(flag, value, f"must be a number of seconds above 0 (default {default})")
    hb = settings.heartbeat_timeout
    if not _number(hb) or hb < MIN_HEARTBEAT_TIMEOUT:
        bad(
            "heartbeat-timeout",
            hb,
            f"must be a number of seconds of at least {MIN_HEARTBEAT_TIMEOUT:g} (workers beat "
            "every second; default 20)",
        )
    if not 0 <= settings.port <= 65535:
        bad("port", settings.port, "must be a TCP port, 1 to 65535 (or 0: any free port)")
    if settings.max_requeues < 0:
        bad("max-requeues", settings.max_requeues, "must be 0 or more (default 3)")
    if settings.max_pilots is not None:
        try:
            parse_max_pilots(settings.max_pilots)
        except ValueError as e:
            bad("max-pilots", settings.max_pilots, str(e))
        if settings.backend != "slurm":
            bad(
                "max-pilots",
                settings.max_pilots,
                "applies to Slurm pilots only (--sticky-backend slurm); local workers are "
                "bounded by --sticky-max-workers",
            )
    if settings.slurm_options is not None and settings.backend != "slurm":
        bad(
            "slurm-options",
            repr(settings.slurm_options),
            "applies with --sticky-backend slurm only (it configures the Slurm jobs of the "
            "jobs that do not opt in)",
        )
    if settings.checkpoints is None:
        store_settings: list[tuple[str, Union[str, bool, None]]] = [
            ("checkpoints-plan", settings.checkpoints_plan or None),
            ("checkpoints-key", settings.checkpoints_key),
            ("checkpoints-roots", settings.checkpoints_roots),
        ]
        for flag, setting in store_settings:
            if setting is not None:
                given = f"--sticky-{flag}" + ("" if setting is True else f" {setting}")
                problems.append(
                    f"{given}: has no effect without --sticky-checkpoints DIR (the store it "
                    "applies to); add that, or drop this setting"
                )
    address_problem = listen_address_problem(settings.listen_address)
    if address_problem:
        bad("listen-address", settings.listen_address or "''", address_problem)
    return problems


@dataclass(frozen=True)
class PilotLimits:
    """How many Slurm pilots may run at once: in all, and per template."""

    total: int
    per_template: dict[str, int] = field(default_factory=dict)


def parse_max_pilots(value: Union[str, int]) -> PilotLimits:
    """``--sticky-max-pilots``: ``N`` or ``N,TEMPLATE=M,...`` (ValueError says what is wrong).

    A profile's ``sticky-max-pilots: 8`` arrives as the integer 8."""
    text = str(value).strip()
    items = [item.strip() for item in text.split(",")]
    total: Optional[int] = None
    per_template: dict[str, int] = {}
    for item in items:
        name, eq, number = item.rpartition("=")
        if not number.strip().isdigit() or int(number) < 1:
            raise ValueError(
                f"{item or 'an empty item'!r} is not a count of at least 1; write N or "
                "N,TEMPLATE=M,... (e.g. 8,train=2)"
            )
        if not eq:
            if total is not None:
                raise ValueError("gives the total twice; write N,TEMPLATE=M,... (e.g. 8,train=2)")
            total = int(number)
        elif not name.strip() or " " in name.strip():
            raise ValueError(f"{name.strip()!r} is not a template name (in {item!r})")
        elif name.strip() in per_template:
            raise ValueError(f"limits template {name.strip()!r} twice")
        else:
            per_template[name.strip()] = int(number)
    if total is None:
        total = max([DEFAULT_MAX_PILOTS, *per_template.values()])
    for name, count in per_template.items():
        if count > total:
            raise ValueError(f"allows {count} pilots for {name!r} but only {total} in all")
    return PilotLimits(total, per_template)


def pilot_limits(settings: ExecutorSettings) -> PilotLimits:
    """The pilot limits a run uses: --sticky-max-pilots, else --sticky-max-workers, else the
    default (never --cores/--jobs: those bound jobs, not pilots)."""
    if settings.max_pilots is not None:
        return parse_max_pilots(settings.max_pilots)
    return PilotLimits(settings.max_workers or DEFAULT_MAX_PILOTS)


def listen_address_problem(address: str) -> Optional[str]:
    """Why ``address`` cannot be a listen address, judged by its spelling alone (or None).

    Numeric addresses must be valid IPv4/IPv6 addresses (``256.1.1.1`` is not); other names
    are host names, resolved when the manager binds."""
    import ipaddress
    import re

    if not address or address != address.strip():
        return "must be an address of this machine, e.g. 127.0.0.1 (the default) or 0.0.0.0"
    numeric = re.fullmatch(r"[0-9.]+", address) or ":" in address
    if numeric:
        try:
            ipaddress.ip_address(address.strip("[]"))
        except ValueError:
            return (
                "is not a valid IP address; use an address of this machine, e.g. 127.0.0.1 "
                "(the default) or 0.0.0.0 (all interfaces)"
            )
    return None


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and value == value  # not NaN
