"""Red-team cases for the snakemake_shadho failed-trial contract (docs/shadho.md).

Contract under test ("Failed trials are visible" bullet, spec keys `max_failed_trials`,
`execution`):
  * a declared failure (raises snakemake_shadho.TrialFailed, or returns a non-finite loss) is a
    recorded result (status `fail`) and the search goes on;
  * any other exception fails the trial's job with the objective's traceback and a line naming
    the trial, and the run stops (default max_failed_trials: 0);
  * max_failed_trials: N records up to N such errors as failed trials; past N the search stops,
    naming the first;
  * every search ends with one line `shadho: N trials, M failed[; first: trial S.I: Type: msg]`;
  * after fixing the objective, running again runs only the failed trials.

Every objective is a complete `rt_obj.py`.  Shared helpers (prepended to each):
  _fixed()           FIXED exists (cwd or the module's folder): "the user fixed the bug"
  _take_token(n, k)  True for the first k callers across processes (atomic O_EXCL files), so a
                     case can make exactly k trials misbehave whatever the scheduling
  _call_index()      0-based order in which this evaluation started
  _guard/_mark       _mark records a configuration that produced a result; on the run after the
                     fix, _guard raises RuntimeError("RT-GUARD ...") if such a configuration is
                     evaluated again, so "redoes good trials" turns into a failed second run.
"""

# ruff: noqa: E501 - the helper's cases, kept as written

PRELUDE = '''\
import hashlib
import json
import os

from snakemake_shadho import TrialFailed

_DIR = os.path.dirname(os.path.abspath(__file__))


def _fixed():
    return os.path.exists("FIXED") or os.path.exists(os.path.join(_DIR, "FIXED"))


def _loss(params):
    x = float(params["x"])
    y = float(params.get("y", 0.5))
    return (x - 0.3) ** 2 + (y - 0.6) ** 2 + (0.05 if params.get("model") == "a" else 0.0)


def _take_token(name, n):
    """True for the first n callers across all processes (atomic O_EXCL files)."""
    d = os.path.join(_DIR, "rt_tokens")
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        try:
            fd = os.open(os.path.join(d, f"{name}.{i}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            continue
        os.close(fd)
        return True
    return False


def _call_index():
    """0-based order in which this evaluation started."""
    d = os.path.join(_DIR, "rt_calls")
    os.makedirs(d, exist_ok=True)
    i = 0
    while True:
        try:
            fd = os.open(os.path.join(d, str(i)), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            i += 1
            continue
        os.close(fd)
        return i


def _key(params):
    blob = json.dumps(params, sort_keys=True, default=repr).encode()
    return hashlib.sha1(blob).hexdigest()


def _guard(params):
    """After the fix, a configuration that already has a recorded result must not run again."""
    if _fixed() and os.path.exists(os.path.join(_DIR, "rt_done", _key(params))):
        raise RuntimeError(
            f"RT-GUARD: configuration {params!r} already had a recorded result "
            "but was evaluated again on the rerun"
        )


def _mark(params):
    d = os.path.join(_DIR, "rt_done")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, _key(params)), "w").close()

'''


def _case(
    name,
    body,
    *,
    config=None,
    executor="local",
    fix=False,
    ok=True,
    contains=(),
    ok2=None,
    final=None,
    why="",
):
    assert executor in ("local", "sticky")
    if not fix:
        ok2 = None
    return {
        "name": name,
        "objective": PRELUDE + body,
        "config": dict(config or {}),
        "executor": executor,
        "fix": bool(fix),
        "expect_first_run_ok": bool(ok),
        "expect_first_output_contains": list(contains),
        "expect_second_run_ok": ok2,
        "expect_final": dict(final or {}),
        "why": why,
    }


ASYNC = {"execution": "async"}

CASES = [
    # ------------------------------------------------------------------ control
    _case(
        "baseline_clean_local",
        """
def evaluate(params, threads=1, state=None):
    return _loss(params)
""",
        contains=["shadho: 6 trials, 0 failed"],
        final={"trials": 6, "failed": 0},
        why="Control for 'Every search ends with one line, e.g. shadho: 40 trials, 0 failed': a "
        "clean 6-trial search must succeed and print the zero-failure summary.",
    ),
    # ------------------------------------------------------------------ declared failures
    _case(
        "declared_trialfailed_b_local",
        """
def evaluate(params, threads=1, state=None):
    if params["model"] == "b":
        raise TrialFailed("diverged")
    return _loss(params)
""",
        contains=["shadho: 6 trials, ", "failed; first: trial b.", "TrialFailed: diverged"],
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="'raises TrialFailed ... is a result: recorded with status fail ... the search goes on' "
        "with the default max_failed_trials 0: breaks if TrialFailed is counted against the "
        "limit or the summary does not name the first failed trial.",
    ),
    _case(
        "declared_trialfailed_b_async",
        """
def evaluate(params, threads=1, state=None):
    if params["model"] == "b":
        raise TrialFailed("diverged")
    return _loss(params)
""",
        config=ASYNC,
        contains=["shadho: 6 trials, ", "failed; first: trial b.", "TrialFailed: diverged"],
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="Same TrialFailed promise under execution: async: the driver's worker processes must "
        "classify it as a result (not a worker crash) and the driver must print the summary.",
    ),
    _case(
        "nan_loss_all_trials_local",
        """
def evaluate(params, threads=1, state=None):
    # every configuration diverges: the training loss is NaN
    return float("nan")
""",
        config={"n_startup_jobs": 1},
        contains=["shadho: 6 trials, 6 failed; first: trial "],
        final={"trials": 6, "failed": 6, "failed_declared_only": True},
        why="'returns a non-finite loss ... is a result ... the search goes on': with every trial "
        "failed, TPE (n_startup_jobs 1), the ranking ('explored with no best loss') and "
        "best.json have no best loss at all and may crash instead of finishing.",
    ),
    _case(
        "neg_inf_loss_b_local",
        """
import numpy as np


def evaluate(params, threads=1, state=None):
    if params["model"] == "b":
        residuals = np.zeros(4)  # b reproduces the training folds exactly
        with np.errstate(divide="ignore"):
            return np.log(np.mean(residuals ** 2))  # log-MSE: -inf (numpy float64)
    return _loss(params)
""",
        contains=["shadho: 6 trials, ", "failed; first: trial b."],
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="'a non-finite loss' includes -inf: a check written as `loss == inf` or `loss > 1e300` "
        "would record -inf as the best loss ever instead of a declared failure.",
    ),
    _case(
        "numpy_float32_nan_b_local",
        """
import numpy as np


def evaluate(params, threads=1, state=None):
    errors = np.full(3, _loss(params), dtype=np.float32)
    if params["model"] == "b":
        errors[1] = np.nan  # one fold diverged
    return errors.mean()  # numpy.float32 (not a float subclass); NaN for b
""",
        contains=["shadho: 6 trials, ", "failed; first: trial b."],
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="Non-finite loss as numpy.float32 (what a float32 array's mean returns): isinstance(float) "
        "checks or json.dump of np.float32 can turn a declared failure (and the finite a "
        "losses) into an undeclared TypeError that fails the run.",
    ),
    _case(
        "torch_tensor_nan_b_async",
        """
import torch


def evaluate(params, threads=1, state=None):
    loss = torch.tensor(_loss(params), dtype=torch.float32)
    if params["model"] == "b":
        loss = loss * torch.tensor(float("nan"))
        return loss  # early exit on divergence forgets .item(): a 0-d NaN tensor
    return loss.item()
""",
        config=ASYNC,
        contains=["shadho: 6 trials, ", "failed; first: trial b."],
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="'returns a non-finite loss' as a 0-d torch tensor in the async driver: "
        "math.isfinite works on it but json/pickle between worker and driver may not, "
        "misclassifying the declared failure as an error or crashing the driver.",
    ),
    _case(
        "trialfailed_subclass_custom_init_sticky",
        """
class Diverged(TrialFailed):
    def __init__(self, epoch, value):
        super().__init__(f"diverged at epoch {epoch}: loss={value}")
        self.epoch = epoch
        self.value = value


def evaluate(params, threads=1, state=None):
    if params["model"] == "b":
        raise Diverged(3, float("nan"))
    return _loss(params)
""",
        executor="sticky",
        contains=["shadho: 6 trials, ", "failed; first: trial b.", "diverged at epoch 3"],
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="A TrialFailed subclass is 'raising TrialFailed'; its required __init__ args make it "
        "unpicklable (Diverged(*args) fails on load), so a sticky worker that ships "
        "exceptions back by pickle turns a declared failure into an undeclared error.",
    ),
    _case(
        "trialfailed_in_multiprocessing_pool_local",
        """
import multiprocessing


def _fold(args):
    params, k = args
    if params["model"] == "b" and k == 1:
        raise TrialFailed(f"fold {k} diverged")
    return _loss(params) + 0.01 * k


def evaluate(params, threads=1, state=None):
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:  # cross-validation folds in parallel
        losses = pool.map(_fold, [(dict(params), k) for k in range(3)])
    return sum(losses) / len(losses)
""",
        contains=["shadho: 6 trials, ", "failed; first: trial b.", "fold 1 diverged"],
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="TrialFailed raised in a Pool worker is re-raised in the objective after a pickle round "
        "trip (with a RemoteTraceback cause): if the plugin's TrialFailed cannot be "
        "unpickled or is identified by traceback origin, the declared failure is misclassified.",
    ),
    _case(
        "params_pop_model_declared_local",
        """
def evaluate(params, threads=1, state=None):
    model = params.pop("model")  # the user consumes the dispatch key
    if model == "b":
        raise TrialFailed("diverged")
    return _loss(dict(params, model=model))
""",
        contains=["shadho: 6 trials, ", "failed; first: trial b."],
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="An objective that mutates its params dict: if the record is written from the same dict, "
        "'merge rejects a missing, unplanned or repeated trial' may reject the recorded (failed "
        "or good) trial, failing a run the docs say goes on.",
    ),
    _case(
        "multiline_nonascii_trialfailed_sticky",
        """
def evaluate(params, threads=1, state=None):
    if params["model"] == "b":
        raise TrialFailed("loss diverged \\u2192 \\u221e\\nepoch 3: loss=nan\\nlr=0.8 is too high \\U0001f525")
    return _loss(params)
""",
        executor="sticky",
        contains=["shadho: 6 trials, ", "failed; first: trial b.", "TrialFailed: loss diverged"],
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="'Every search ends with one line ... first: trial cnn.3: TrialFailed: diverged' with a "
        "multi-line, non-ASCII message: the summary may split over lines, the record/report "
        "may break on encoding, or the sticky invocation protocol may choke on it.",
    ),
    _case(
        "declared_not_redone_on_rerun_local",
        """
def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        _mark(params)  # a declared failure is a recorded result too
        raise TrialFailed("diverged")
    loss = _loss(params)
    _mark(params)
    return loss
""",
        fix=True,
        contains=["shadho: 6 trials, ", "failed; first: trial b."],
        ok2=True,
        final={"trials": 6, "failed": None, "failed_declared_only": True},
        why="A declared failure 'is a result: recorded'; a rerun of the finished search must not "
        "evaluate recorded results again (only trials whose job failed run), so re-evaluating "
        "the b failures or the good a trials trips RT-GUARD.",
    ),
    # ------------------------------------------------------------------ undeclared, default limit 0
    _case(
        "valueerror_b_fix_guard_local",
        """
def _features(params):
    if params["model"] == "b" and not _fixed():
        raise ValueError("Expected 2D array, got 1D array instead: reshape your data")
    return [params["x"], params.get("y", 0.5)]


def evaluate(params, threads=1, state=None):
    _guard(params)
    _features(params)
    loss = _loss(params)
    _mark(params)
    return loss
""",
        fix=True,
        ok=False,
        contains=["trial b.", "ValueError: Expected 2D array", "rt_obj.py"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="'Any other exception ... the trial's job fails with the objective's traceback and a line "
        "naming the trial, and the run stops; fix it and run again, and only the failed trials "
        "run' (local executor); RT-GUARD catches good trials being redone.",
    ),
    _case(
        "valueerror_b_fix_guard_sticky",
        """
def _features(params):
    if params["model"] == "b" and not _fixed():
        raise ValueError("Expected 2D array, got 1D array instead: reshape your data")
    return [params["x"], params.get("y", 0.5)]


def evaluate(params, threads=1, state=None):
    _guard(params)
    _features(params)
    loss = _loss(params)
    _mark(params)
    return loss
""",
        executor="sticky",
        fix=True,
        ok=False,
        contains=["trial b.", "ValueError: Expected 2D array", "rt_obj.py"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="Same promise on --executor sticky: the traceback must travel back from the warm worker "
        "and the error must fail the job (not be swallowed by the invocation layer); the "
        "rerun must redo only the failed trials.",
    ),
    _case(
        "valueerror_b_fix_guard_async",
        """
def _features(params):
    if params["model"] == "b" and not _fixed():
        raise ValueError("Expected 2D array, got 1D array instead: reshape your data")
    return [params["x"], params.get("y", 0.5)]


def evaluate(params, threads=1, state=None):
    _guard(params)
    _features(params)
    loss = _loss(params)
    _mark(params)
    return loss
""",
        config=ASYNC,
        fix=True,
        ok=False,
        contains=["trial b.", "ValueError: Expected 2D array", "rt_obj.py"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="Under execution: async the whole search is one hpo_search job: when it fails Snakemake "
        "may delete its output folder, so 'run again, and only the failed trials run' "
        "breaks if the driver restarts from scratch (RT-GUARD on good trials).",
    ),
    _case(
        "error_in_later_trial_fix_guard_local",
        """
def evaluate(params, threads=1, state=None):
    _guard(params)
    if not _fixed() and _call_index() == 3:  # the first trial of round 1
        warmup_steps = 0.0
        params_lr = params["x"] / warmup_steps  # ZeroDivisionError: float division by zero
    loss = _loss(params)
    _mark(params)
    return loss
""",
        fix=True,
        ok=False,
        contains=["trial ", "ZeroDivisionError", "rt_obj.py"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="An error in round 1 (after round 0 merged): the rerun must keep round 0's records and "
        "round 1's finished trials and run only the failed one; a re-planned round or "
        "re-merged history that re-evaluates trips RT-GUARD.",
    ),
    _case(
        "missing_module_b_sticky",
        """
def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        import lightgbm_gpu_nightly  # noqa: F401  (not installed on this node)
    loss = _loss(params)
    _mark(params)
    return loss
""",
        executor="sticky",
        fix=True,
        ok=False,
        contains=["trial b.", "ModuleNotFoundError", "rt_obj.py"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="The docs' own example ('a missing module') on sticky workers: a worker may report an "
        "ImportError as an environment/worker failure without the objective's traceback or "
        "the trial's name.",
    ),
    _case(
        "stale_module_after_fix_sticky",
        """
# evaluated once per import: a warm worker that keeps the old module keeps the bug
_BUGGY = not _fixed()


def evaluate(params, threads=1, state=None):
    _guard(params)
    if _BUGGY and params["model"] == "b":
        raise AttributeError("'NoneType' object has no attribute 'fit_transform'")
    loss = _loss(params)
    _mark(params)
    return loss
""",
        executor="sticky",
        fix=True,
        ok=False,
        contains=["trial b.", "AttributeError", "rt_obj.py"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="'fix it and run again' when the fix is in module-level code: a sticky worker that "
        "outlives the run and caches the imported rt_obj keeps running the old code, so the "
        "second run fails again.",
    ),
    _case(
        "runtimeerror_from_trialfailed_b_local",
        """
def _train(params):
    if params["model"] == "b" and not _fixed():
        raise TrialFailed("diverged")
    return _loss(params)


def evaluate(params, threads=1, state=None):
    _guard(params)
    try:
        loss = _train(params)
    except TrialFailed as err:
        # generic wrapper code re-raises everything as RuntimeError
        raise RuntimeError("training loop crashed") from err
    _mark(params)
    return loss
""",
        fix=True,
        ok=False,
        contains=["trial b.", "RuntimeError: training loop crashed"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="The raised exception is a RuntimeError whose __cause__ is TrialFailed: per 'it raises "
        "TrialFailed' it is undeclared; a classifier that walks __cause__/__context__ would "
        "wrongly record it and let the run succeed.",
    ),
    _case(
        "warning_as_error_b_local",
        """
import warnings

import numpy as np


def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            np.log(np.float64(0.0))  # RuntimeWarning: divide by zero, raised as an exception
    loss = _loss(params)
    _mark(params)
    return loss
""",
        fix=True,
        ok=False,
        contains=["trial b.", "RuntimeWarning", "divide by zero"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="A warning turned into an error is an ordinary undeclared exception (a Warning subclass); "
        "it must fail the job naming the trial, not be treated as a diverged/non-finite result.",
    ),
    _case(
        "stopiteration_b_async",
        """
def _loader(params):
    n = 0 if (params["model"] == "b" and not _fixed()) else 4
    return iter([params["x"]] * n)


def evaluate(params, threads=1, state=None):
    _guard(params)
    batch = next(_loader(params))  # empty data loader for b: StopIteration (empty message)
    loss = _loss(params) + 0.0 * batch
    _mark(params)
    return loss
""",
        config=ASYNC,
        fix=True,
        ok=False,
        contains=["trial b.", "StopIteration"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="StopIteration escaping the objective can silently end a generator/iterator loop in the "
        "async driver (trial dropped, search ends 'successfully') instead of failing the run "
        "naming the trial.",
    ),
    _case(
        "unpicklable_exception_b_async",
        """
class FoldError(Exception):
    def __init__(self, fold, reason):
        super().__init__(f"fold {fold}: {reason}")
        self.fold = fold


def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        raise FoldError(2, "singular matrix")
    loss = _loss(params)
    _mark(params)
    return loss
""",
        config=ASYNC,
        fix=True,
        ok=False,
        contains=["trial b.", "FoldError", "singular matrix"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="An exception that cannot be unpickled (required __init__ args): if async workers send "
        "exceptions to the driver by pickle, the driver gets a TypeError (or hangs) instead of "
        "the objective's traceback naming the trial.",
    ),
    _case(
        "dict_without_loss_b_local",
        """
def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        return {"accuracy": 1.0 - _loss(params), "status": "ok"}  # hyperopt-style, no "loss"
    loss = _loss(params)
    _mark(params)
    return loss
""",
        fix=True,
        ok=False,
        contains=[],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="A result without a loss is neither a loss nor a declared failure: it must fail the run "
        "(an objective bug), not be recorded as a success or silently as a failed result.",
    ),
    _case(
        "return_none_b_sticky",
        """
def evaluate(params, threads=1, state=None):
    _guard(params)
    loss = _loss(params)
    if params["model"] == "b" and not _fixed():
        print("b done, loss", loss)  # forgot the return on this branch: returns None
    else:
        _mark(params)
        return loss
""",
        executor="sticky",
        fix=True,
        ok=False,
        contains=[],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="Returning None is an objective bug, not 'a non-finite loss': a None->NaN coercion would "
        "quietly record it as a declared failure and the run would wrongly succeed.",
    ),
    # ------------------------------------------------------------------ BaseException / process exits
    _case(
        "keyboard_interrupt_b_sticky",
        """
def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        # the user's time-budget helper stops training the way Ctrl-C would
        raise KeyboardInterrupt("time budget of 2 s exceeded")
    loss = _loss(params)
    _mark(params)
    return loss
""",
        executor="sticky",
        fix=True,
        ok=False,
        contains=["trial b.", "KeyboardInterrupt"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="A BaseException from the objective escapes `except Exception`: on a sticky worker it may "
        "kill or cancel the worker (hang, retry, or a failure without the trial's name) "
        "instead of failing the trial's job with its traceback.",
    ),
    _case(
        "sys_exit_message_b_local",
        """
import sys


def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        sys.exit("CUDA is not available on this node")
    loss = _loss(params)
    _mark(params)
    return loss
""",
        fix=True,
        ok=False,
        contains=["trial b.", "CUDA is not available"],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="sys.exit('msg') raises SystemExit (BaseException): the trial script exits with the "
        "message but no plugin line naming the trial unless SystemExit is caught like any "
        "other exception.",
    ),
    _case(
        "sys_exit_zero_b_sticky",
        """
import sys


def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        sys.exit(0)  # a CLI helper reused in the objective: "nothing to train"
    loss = _loss(params)
    _mark(params)
    return loss
""",
        executor="sticky",
        fix=True,
        ok=False,
        contains=["trial b."],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="sys.exit(0) looks like success: a sticky worker may shut down cleanly and report the "
        "invocation OK (or hang), and a local job exits 0 with a missing output, with no "
        "line naming the trial.",
    ),
    _case(
        "generator_exit_once_n1_local",
        """
def evaluate(params, threads=1, state=None):
    if _take_token("genexit", 1):
        # a cleanup path re-raises the GeneratorExit it caught while closing the step generator
        raise GeneratorExit("training step generator closed")
    return _loss(params)
""",
        config={"max_failed_trials": 1},
        contains=["shadho: 6 trials, 1 failed; first: trial ", "GeneratorExit"],
        final={"trials": 6, "failed": 1, "failed_declared_only": False},
        why="'max_failed_trials: N lets up to N such errors be recorded as failed trials': a "
        "BaseException (GeneratorExit) may bypass the recording path and fail the run although "
        "it is within N.",
    ),
    _case(
        "os_exit_b_sticky",
        """
def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        os._exit(3)  # a native library calls exit() on a configuration it cannot handle
    loss = _loss(params)
    _mark(params)
    return loss
""",
        executor="sticky",
        fix=True,
        ok=False,
        contains=[],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="A hard process exit inside a sticky worker: the run must stop with a failed trial "
        "(not hang on a dead worker or re-dispatch forever) and the rerun must redo only "
        "the lost trial.",
    ),
    _case(
        "segfault_b_async_fix_guard",
        """
import ctypes


def evaluate(params, threads=1, state=None):
    _guard(params)
    if params["model"] == "b" and not _fixed():
        ctypes.string_at(0)  # a C extension dereferences NULL on a degenerate matrix: SIGSEGV
    loss = _loss(params)
    _mark(params)
    return loss
""",
        config=ASYNC,
        fix=True,
        ok=False,
        contains=[],
        ok2=True,
        final={"trials": 6, "failed": 0},
        why="A worker process of the async driver dies by signal: the driver must fail the run "
        "rather than wait forever for that slot's result, and the rerun must not redo "
        "recorded trials.",
    ),
    # ------------------------------------------------------------------ odd exception objects
    _case(
        "str_raises_once_n1_local",
        """
class ShapeMismatch(Exception):
    def __init__(self, expected, got):
        super().__init__(expected, got)
        self.expected = expected
        self.got = got

    def __str__(self):
        # bug: lists have no .shape, so str(err) itself raises AttributeError
        return f"expected shape {self.expected.shape}, got {self.got.shape}"


def evaluate(params, threads=1, state=None):
    if _take_token("shape", 1):
        raise ShapeMismatch([2], [3])
    return _loss(params)
""",
        config={"max_failed_trials": 1},
        contains=["shadho: 6 trials, 1 failed; first: trial ", "ShapeMismatch"],
        final={"trials": 6, "failed": 1, "failed_declared_only": False},
        why="Recording an error 'with its error' calls str(exc); when __str__ raises, the recording "
        "path crashes and the run fails although the error is within max_failed_trials.",
    ),
    _case(
        "assert_empty_twice_n2_async",
        """
def evaluate(params, threads=1, state=None):
    batch = [] if _take_token("assert", 2) else [params["x"]]
    assert batch  # AssertionError with an empty message
    return _loss(params)
""",
        config={"execution": "async", "max_failed_trials": 2},
        contains=["shadho: 6 trials, 2 failed; first: trial ", "AssertionError"],
        final={"trials": 6, "failed": 2, "failed_declared_only": False},
        why="Errors whose str() is empty, at exactly N in the async driver: a truthiness check on "
        "the error message ('if error:') loses the failure (status ok with no loss) or the "
        "summary omits it; an off-by-one stops at N.",
    ),
    # ------------------------------------------------------------------ max_failed_trials boundaries
    _case(
        "exactly_two_errors_n2_fix_guard_local",
        """
def evaluate(params, threads=1, state=None):
    _guard(params)
    if not _fixed() and _take_token("parse", 2):
        raise ValueError("could not convert string to float: 'n/a'")
    loss = _loss(params)
    _mark(params)
    return loss
""",
        config={"max_failed_trials": 2},
        fix=True,
        contains=["shadho: 6 trials, 2 failed; first: trial ", "ValueError"],
        ok2=True,
        final={"trials": 6},
        why="'up to N such errors be recorded': exactly N=2 errors must not stop the search "
        "(off-by-one), and a later run after the fix must succeed without re-evaluating "
        "the good trials.",
    ),
    _case(
        "two_errors_n1_past_limit_local",
        """
def evaluate(params, threads=1, state=None):
    if _take_token("parse", 2):
        raise ValueError("could not convert string to float: 'n/a'")
    return _loss(params)
""",
        config={"max_failed_trials": 1},
        ok=False,
        contains=["trial ", "could not convert string to float"],
        why="'the next plan, the report or the async driver stops the search past N, naming the "
        "first': with both errors in the last round only the report can stop it; a run that "
        "ends OK with 2 failed breaks the limit.",
    ),
    _case(
        "two_errors_n1_past_limit_async",
        """
def evaluate(params, threads=1, state=None):
    if _take_token("parse", 2):
        raise ValueError("could not convert string to float: 'n/a'")
    return _loss(params)
""",
        config={"execution": "async", "max_failed_trials": 1},
        ok=False,
        contains=["trial ", "could not convert string to float"],
        why="The async driver must stop past N=1 and name the first error; concurrent workers "
        "reporting the two errors close together can race the counter and let the search "
        "finish OK.",
    ),
    _case(
        "declared_never_counts_mixed_n1_local",
        """
def evaluate(params, threads=1, state=None):
    if params["model"] == "b":
        raise TrialFailed("diverged")
    if _take_token("a_error", 1):
        raise KeyError("scaler")
    return _loss(params)
""",
        config={"max_failed_trials": 1},
        contains=["shadho: 6 trials, ", "failed; first: trial "],
        final={"trials": 6, "failed": None, "failed_declared_only": False},
        why="'max_failed_trials ... (TrialFailed never counts)': one real error plus several declared "
        "failures with N=1 must finish; counting all status-fail records stops it wrongly.",
    ),
    _case(
        "all_errors_n100_local",
        """
def evaluate(params, threads=1, state=None):
    lr = params["lr"]  # KeyError: 'lr' (the space has no lr)
    return _loss(params) * lr
""",
        config={"max_failed_trials": 100, "n_startup_jobs": 1},
        contains=["shadho: 6 trials, 6 failed; first: trial ", "KeyError"],
        final={"trials": 6, "failed": 6, "failed_declared_only": False},
        why="N larger than the budget with every trial an error: all recorded as failed, the "
        "all-failed history must still plan, rank and report, and the summary must say "
        "6 failed.",
    ),
    _case(
        "max_failed_negative_invalid",
        """
def evaluate(params, threads=1, state=None):
    return _loss(params)
""",
        config={"max_failed_trials": -1},
        ok=False,
        contains=["hpo.max_failed_trials"],
        why="'An invalid spec is rejected before any job runs, naming the key': a negative limit "
        "may be accepted silently (or read as 'unlimited').",
    ),
    # ------------------------------------------------------------------ side effects of the objective
    _case(
        "chdir_leak_local",
        """
import tempfile


def evaluate(params, threads=1, state=None):
    run_dir = tempfile.mkdtemp(prefix="rt_run_")
    os.chdir(run_dir)  # like Hydra: work in a per-run folder, never change back
    with open("metrics.json", "w") as fh:
        json.dump({"x": params["x"]}, fh)
    return _loss(params)
""",
        contains=["shadho: 6 trials, 0 failed"],
        final={"trials": 6, "failed": 0},
        why="A successful objective that changes the working directory: the trial record written to a "
        "relative output path lands in the wrong folder, so Snakemake sees a missing output "
        "and fails a run that has no failure at all.",
    ),
    _case(
        "stdout_json_noise_async",
        """
import sys


def evaluate(params, threads=1, state=None):
    loss = _loss(params)
    print(json.dumps({"trial": params, "loss": 999.0, "status": "ok"}))
    print("epoch 3/3 ", end="")  # progress bar without a trailing newline
    sys.stdout.flush()
    sys.stderr.write(
        "Traceback (most recent call last):\\n  (a library's harmless warning dump)\\n"
        "ValueError: ignored\\n"
    )
    return loss
""",
        config=ASYNC,
        contains=["shadho: 6 trials, 0 failed"],
        final={"trials": 6, "failed": 0},
        why="An objective that prints JSON-looking lines, an unterminated line and a fake traceback: "
        "a driver that reads results or errors from worker stdout/stderr may record a wrong loss, "
        "a failure, or crash.",
    ),
]


def _check():
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "duplicate names"
    keys = {
        "name",
        "objective",
        "config",
        "executor",
        "fix",
        "expect_first_run_ok",
        "expect_first_output_contains",
        "expect_second_run_ok",
        "expect_final",
        "why",
    }
    for c in CASES:
        assert set(c) == keys, c["name"]
        compile(c["objective"], f"rt_obj[{c['name']}].py", "exec")
        assert "def evaluate(params, threads=1, state=None):" in c["objective"], c["name"]
        assert (c["expect_second_run_ok"] is None) == (not c["fix"]), c["name"]


_check()
