"""The documented environment of Slurm pilots (issue 18 part 4), and the health watch that
keeps pilots running when Slurm accounting is down (part 5): pure cores, no processes."""

import logging

from snakemake_executor_plugin_sticky import _launch, slurm
from snakemake_executor_plugin_sticky._pilot_env import pilot_environment
from snakemake_executor_plugin_sticky._slurm_health import SlurmWatch

SUBMIT_HOST = {
    "PATH": "/opt/venv/bin:/usr/bin",
    "HOME": "/home/ada",
    "USER": "ada",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "VIRTUAL_ENV": "/opt/venv",
    "PYTHONPATH": "/src/a,b:/src/c",  # a comma in a value: never on a command line
    "CONDA_PREFIX": "/opt/conda/envs/x",
    "LD_LIBRARY_PATH": "/opt/conda/envs/x/lib",
    "OMP_NUM_THREADS": "1",
    "STICKY_CONNECTION_FILE": "/run/x/connection",
    "DISTEA_TRACE": "/tmp/trace",
    "SNAKEMAKE_PROFILE": "slurm-sticky",
    "HF_HOME": "/models",
    # Of the submit host only:
    "SLURM_JOB_ID": "4242",
    "SLURM_CPUS_PER_TASK": "16",
    "SLURM_MEM_PER_NODE": "64000",
    "SLURM_CONF": "/etc/slurm/slurm.conf",
    "SBATCH_ACCOUNT": "lab",
    "CUDA_VISIBLE_DEVICES": "0",
    "AWS_SECRET_ACCESS_KEY": "hunter2",
    "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
    "DISPLAY": ":0",
    "TMPDIR": "/tmp/login-node-only",
}


def test_pilots_get_python_path_identity_and_plugin_variables_only():
    env = pilot_environment(SUBMIT_HOST)
    assert env.export == tuple(
        sorted(
            [
                "PATH",
                "HOME",
                "USER",
                "LANG",
                "LC_ALL",
                "VIRTUAL_ENV",
                "PYTHONPATH",
                "CONDA_PREFIX",
                "LD_LIBRARY_PATH",
                "OMP_NUM_THREADS",
                "STICKY_CONNECTION_FILE",
                "DISTEA_TRACE",
                "SNAKEMAKE_PROFILE",
            ]
        )
    )
    assert env.export_option() == "--export=" + ",".join(env.export)
    assert "/src/a,b" not in env.export_option()  # values travel in sbatch's environment
    assert env.submit_env["PYTHONPATH"] == "/src/a,b:/src/c"


def test_the_submit_hosts_slurm_variables_never_reach_sbatch_or_the_pilot():
    env = pilot_environment(SUBMIT_HOST)
    assert env.dropped_slurm == ("SLURM_CPUS_PER_TASK", "SLURM_JOB_ID", "SLURM_MEM_PER_NODE")
    assert not any(k.startswith("SLURM_") and k != "SLURM_CONF" for k in env.submit_env)
    # sbatch needs to find its cluster; site defaults for sbatch stay sbatch's.
    assert env.submit_env["SLURM_CONF"] == "/etc/slurm/slurm.conf"
    assert env.submit_env["SBATCH_ACCOUNT"] == "lab"
    assert "SBATCH_ACCOUNT" not in env.export
    for secret_or_local in ("AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "DISPLAY", "TMPDIR"):
        assert secret_or_local not in env.submit_env
    assert "CUDA_VISIBLE_DEVICES" not in env.submit_env  # Slurm sets the pilot's own


def test_variables_the_workflow_declares_with_envvars_are_passed():
    env = pilot_environment(SUBMIT_HOST, needed=["HF_HOME", "NOT_SET_ANYWHERE", "SLURM_JOB_ID"])
    assert "HF_HOME" in env.export and env.submit_env["HF_HOME"] == "/models"
    assert "NOT_SET_ANYWHERE" not in env.export
    assert "SLURM_JOB_ID" not in env.submit_env  # never, even when asked for


def test_an_empty_environment_exports_nothing():
    assert pilot_environment({}).export_option() == "--export=NONE"


# ---- the health watch ----------------------------------------------------------------------


def test_accounting_down_is_told_once_and_its_return_once():
    watch = SlurmWatch(accounting_every=30)
    assert watch.probe_due(0.0)
    assert not watch.probe_due(0.0)  # one probe at a time
    warning = watch.probe_result(1.0, "sacct: error: Problem talking to the database")
    assert warning is not None and "Slurm accounting does not answer" in warning
    assert "Problem talking to the database" in warning and "squeue/scontrol" in warning
    assert not watch.probe_due(20.0)  # not before accounting_every
    assert watch.probe_due(31.0)
    assert watch.probe_result(32.0, "sacct: error: again") is None  # told already
    assert watch.probe_due(70.0)
    assert watch.probe_result(71.0, None) == "sticky: Slurm accounting answers again (sacct)"
    assert watch.probe_due(110.0)
    assert watch.probe_result(111.0, None) is None


def test_squeue_failing_past_its_deadline_is_told_once():
    watch = SlurmWatch(squeue_deadline=60)
    assert watch.squeue_failed(0.0, "squeue did not answer within 30 s") is None
    assert watch.squeue_failed(59.0, "x") is None
    warning = watch.squeue_failed(61.0, "squeue did not answer within 30 s")
    assert warning is not None and "squeue has not answered for 61 s" in warning
    assert "--sticky-pilot-start-timeout" in warning
    assert watch.squeue_failed(200.0, "x") is None
    assert watch.squeue_answered() is not None
    assert watch.squeue_answered() is None


# ---- the launcher's view of its pilots, with the Slurm seam replaced --------------------------


class Cluster:
    """Answers of squeue/scontrol/sacct for the launcher, changed by each test."""

    def __init__(self, monkeypatch):
        self.squeue: dict[str, tuple[str, str]] | Exception = {}
        self.scontrol: dict[str, tuple[str, str]] = {}
        self.sacct_error = None
        self.scontrol_asked = []
        monkeypatch.setattr(slurm, "job_states", self._job_states)
        monkeypatch.setattr(slurm, "scontrol_state", self._scontrol_state)
        monkeypatch.setattr(slurm, "accounting_error", lambda job_id="1": self.sacct_error)

    def _job_states(self, name):
        if isinstance(self.squeue, Exception):
            raise self.squeue
        return dict(self.squeue)

    def _scontrol_state(self, job_id):
        self.scontrol_asked.append(job_id)
        return self.scontrol.get(job_id)


def launcher(tmp_path) -> _launch.SlurmLauncher:
    return _launch.SlurmLauncher(tmp_path, tmp_path, b"s" * 32, "run")


def test_a_pilot_leaving_squeues_view_is_looked_up_with_scontrol(tmp_path, monkeypatch):
    cluster = Cluster(monkeypatch)
    la = launcher(tmp_path)
    handle = _launch.SlurmHandle(la, "11", [])
    cluster.squeue = {"11": ("RUNNING", "None")}
    la.refresh(force=True)
    assert handle.ended() is None
    cluster.squeue = {}  # gone from squeue, still known to slurmctld
    cluster.scontrol = {"11": ("RUNNING", "None")}
    la.refresh(force=True)
    assert cluster.scontrol_asked == ["11"] and handle.ended() is None
    cluster.scontrol = {}  # slurmctld forgot it too: it has ended
    la.refresh(force=True)
    assert handle.ended() == "its Slurm job 11 ended: gone"


def test_a_failing_squeue_keeps_the_last_view_and_warns_once(tmp_path, monkeypatch, caplog):
    cluster = Cluster(monkeypatch)
    la = launcher(tmp_path)
    la.watch = SlurmWatch(squeue_deadline=0.0, accounting_every=1e9)
    handle = _launch.SlurmHandle(la, "12", [])
    cluster.squeue = {"12": ("RUNNING", "None")}
    la.refresh(force=True)
    cluster.squeue = slurm.SlurmError("squeue did not answer within 30 s")
    with caplog.at_level(logging.WARNING, logger="snakemake.sticky"):
        for _ in range(3):
            la.refresh(force=True)
    assert handle.ended() is None  # last seen RUNNING: not lost because squeue is down
    told = [r.message for r in caplog.records if "squeue has not answered" in r.message]
    assert len(told) == 1 and "squeue did not answer within 30 s" in told[0]


def test_accounting_down_warns_once_and_pilots_keep_their_states(tmp_path, monkeypatch, caplog):
    cluster = Cluster(monkeypatch)
    cluster.sacct_error = "sacct: error: slurmdbd: Connection refused"
    la = launcher(tmp_path)
    la.watch = SlurmWatch(accounting_every=0.0)
    handle = _launch.SlurmHandle(la, "13", [])
    cluster.squeue = {"13": ("RUNNING", "None")}
    with caplog.at_level(logging.WARNING, logger="snakemake.sticky"):
        for _ in range(5):
            la.refresh(force=True)
            for thread in list(_launch.threading.enumerate()):
                if thread.name == "sticky-sacct-probe":
                    thread.join(timeout=5)
    told = [r.message for r in caplog.records if "accounting does not answer" in r.message]
    assert len(told) == 1 and "Connection refused" in told[0]
    assert handle.ended() is None
