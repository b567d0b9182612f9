# Red-team cases for SHADHO's hardware placement, written from docs/shadho.md, README.md and
# docs/shadho-benchmark.md ("Quality at small budgets (issue 30, part 3)" and
# "Hardware fast for some models only") only.  Imports nothing.

SVM_LINEAR = {"kernel": "linear", "C": {"loguniform": [0.03125, 1024]}}
SVM_RBF = {
    "kernel": "rbf",
    "C": {"loguniform": [0.03125, 32768]},
    "gamma": {"loguniform": [1.0e-4, 10]},
}
CNN = {
    "channels": {"choice": [4, 8, 16]},
    "lr": {"loguniform": [0.001, 0.05]},
    "epochs": {"quniform": [2, 8, 1]},
}


def _with(d, **extra):
    out = dict(d)
    out.update(extra)
    return out


def _space(**options):
    return {"model": {"exclusive": options}}


BASE3 = _space(svm_linear=SVM_LINEAR, svm_rbf=SVM_RBF, cnn=CNN)

CASES = [
    # --- _classes restrictions while the incumbent is served everywhere -------------------
    {
        "name": "incumbent_spread_respects_classes_rounds",
        "why": "The incumbent is served by every class 'that may run it'; if cnn or svm_rbf "
        "becomes the lead, spreading it to every class could ignore its _classes list.",
        "spec": {
            "space": _space(
                svm_linear=SVM_LINEAR,
                svm_rbf=_with(SVM_RBF, _classes=["cpu"]),
                cnn=_with(CNN, _classes=["gpu"]),
            ),
            "hardware": {
                "gpu": {"count": 1, "cpus": 2, "speed": 4.0, "mem_mb": 4000},
                "cpu": {"count": 4, "cpus": 1, "speed": 1.0, "mem_mb": 1000},
            },
            "rounds": 5,
            "trials_per_round": 8,
            "execution": "rounds",
            "seed": 3,
        },
        "budget": 40,
        "seeds": 4,
        "expect": [
            "valid",
            "never_on:cpu:cnn",
            "never_on:gpu:svm_rbf",
            "some_on:gpu:svm_linear",
            "some_on:cpu:svm_linear",
        ],
    },
    {
        "name": "async_idle_fast_workers_must_not_steal_restricted_trials",
        "why": "Under execution: async an idle worker may take another class's queued trial; "
        "four idle fast workers next to one slow worker that alone may run cnn could "
        "take its cnn trials (or the lead's) against _classes.",
        "spec": {
            "space": _space(
                svm_linear=SVM_LINEAR,
                svm_rbf=_with(SVM_RBF, _classes=["fast"]),
                cnn=_with(CNN, _classes=["slow"]),
            ),
            "hardware": {
                "fast": {"count": 4, "cpus": 2, "speed": 4.0},
                "slow": {"count": 1, "cpus": 1, "speed": 1.0},
            },
            "rounds": 10,
            "trials_per_round": 4,
            "execution": "async",
        },
        "budget": 40,
        "seeds": 4,
        "expect": ["valid", "no_idle", "never_on:fast:cnn", "never_on:slow:svm_rbf"],
    },
    {
        "name": "subspace_restricted_to_class_slow_for_it",
        "why": "cnn may run only on cpu although gpu declares a 20x cnn speed-up; the GPU's "
        "declared specialty 'heads its list' and measurement trials go to every class, "
        "either of which could put cnn on the excluded gpu.",
        "spec": {
            "space": _space(
                svm_linear=SVM_LINEAR, svm_rbf=SVM_RBF, cnn=_with(CNN, _classes=["cpu"])
            ),
            "hardware": {
                "gpu": {"count": 2, "cpus": 2, "speed": 1.0, "speed_by_subspace": {"cnn": 20}},
                "cpu": {"count": 2, "cpus": 1, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
        },
        "budget": 40,
        "seeds": 4,
        "expect": ["valid", "no_idle", "never_on:gpu:cnn"],
    },
    {
        "name": "specialist_excluded_next_fastest_allowed_is_specialist",
        "why": "The specialist is 'the fastest class allowed on a sub-space'; with the 20x gpu "
        "excluded by _classes, the tpu (4x its own speed on cnn) is the specialist and "
        "should keep cnn mostly, and gpu must never run it.",
        "spec": {
            "space": _space(
                svm_linear=SVM_LINEAR, svm_rbf=SVM_RBF, cnn=_with(CNN, _classes=["cpu", "tpu"])
            ),
            "hardware": {
                "gpu": {"count": 1, "speed": 1.0, "speed_by_subspace": {"cnn": 20}},
                "tpu": {"count": 2, "speed": 1.0, "speed_by_subspace": {"cnn": 4}},
                "cpu": {"count": 4, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
        },
        "budget": 40,
        "seeds": 5,
        "expect": ["valid", "never_on:gpu:cnn", "mostly_on:tpu:cnn"],
    },
    # --- declared specialties keeping their sub-space --------------------------------------
    {
        "name": "overall_slow_single_worker_specialist",
        "why": "A GPU at half the CPUs' overall speed but 10x on cnn is sorted slowest, so the "
        "windows give it the bottom of the ranking; its declared specialty must still "
        "keep cnn mostly on its one worker against 16 CPU workers.",
        "spec": {
            "space": BASE3,
            "hardware": {
                "gpu": {"count": 1, "cpus": 4, "speed": 0.5, "speed_by_subspace": {"cnn": 10}},
                "cpu": {"count": 16, "cpus": 1, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
        },
        "budget": 40,
        "seeds": 5,
        "expect": ["valid", "no_idle", "mostly_on:gpu:cnn"],
    },
    {
        "name": "specialty_exactly_at_1_5x_threshold",
        "why": "'at least 1.5x its own speed' makes a class with speed 2 and cnn 3 a "
        "specialist; the benchmark doc says the exact threshold now keeps more than half "
        "of cnn's trials on it.",
        "spec": {
            "space": BASE3,
            "hardware": {
                "gpu": {"count": 1, "speed": 2.0, "speed_by_subspace": {"cnn": 3.0}},
                "cpu": {"count": 2, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
        },
        "budget": 40,
        "seeds": 6,
        "expect": ["valid", "mostly_on:gpu:cnn"],
    },
    {
        "name": "docs_example_fast_gpu_with_cnn_16x",
        "why": "The doc's own example 'speed: 4, speed_by_subspace: {cnn: 16}' is a specialty "
        "(4x its speed); a single GPU next to many CPUs must keep cnn mostly, even when "
        "another sub-space leads and is spread over every class.",
        "spec": {
            "space": BASE3,
            "hardware": {
                "fast": {
                    "count": 1,
                    "cpus": 2,
                    "speed": 4.0,
                    "mem_mb": 2000,
                    "speed_by_subspace": {"cnn": 16},
                },
                "slow": {"count": 8, "cpus": 1, "speed": 1.0, "mem_mb": 1000},
            },
            "rounds": 5,
            "trials_per_round": 8,
        },
        "budget": 40,
        "seeds": 5,
        "expect": ["valid", "no_idle", "mostly_on:fast:cnn"],
    },
    {
        "name": "several_specialists_on_distinct_classes",
        "why": "Two specialists (gpu for cnn, fpga for svm_linear) must each keep their "
        "sub-space mostly, while svm_rbf, with no specialist, must get a measuring trial "
        "on every class that may run it.",
        "spec": {
            "space": BASE3,
            "hardware": {
                "gpu": {"count": 1, "speed": 1.0, "speed_by_subspace": {"cnn": 20}},
                "fpga": {"count": 1, "speed": 1.0, "speed_by_subspace": {"svm_linear": 10}},
                "cpu": {"count": 4, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
        },
        "budget": 40,
        "seeds": 4,
        "expect": [
            "valid",
            "no_idle",
            "mostly_on:gpu:cnn",
            "mostly_on:fpga:svm_linear",
            "some_on:gpu:svm_rbf",
            "some_on:fpga:svm_rbf",
        ],
    },
    {
        "name": "one_class_specialist_for_two_costly_subspaces",
        "why": "A GPU whose specialties are two costly sub-spaces (cnn and resnet_net) heads its "
        "list with both; each must stay mostly on it rather than spill to the CPUs.",
        "spec": {
            "space": _space(
                svm_rbf=SVM_RBF,
                cnn=CNN,
                resnet_net={
                    "depth": {"choice": [18, 34, 50]},
                    "lr": {"loguniform": [0.0001, 0.1]},
                    "epochs": {"quniform": [2, 10, 1]},
                },
            ),
            "hardware": {
                "gpu": {
                    "count": 2,
                    "cpus": 4,
                    "speed": 1.0,
                    "speed_by_subspace": {"cnn": 20, "resnet_net": 20},
                },
                "cpu": {"count": 8, "cpus": 1, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
        },
        "budget": 40,
        "seeds": 4,
        "expect": ["valid", "no_idle", "mostly_on:gpu:cnn", "mostly_on:gpu:resnet_net"],
    },
    {
        "name": "two_gpu_classes_competing_for_cnn_async",
        "why": "Two classes both fast on cnn (a100 40x, one worker; v100 15x, two workers): "
        "the docs only promise the GPUs together keep cnn, asynchronously, against 8 "
        "CPU workers that may take queued trials.",
        "spec": {
            "space": BASE3,
            "hardware": {
                "a100": {"count": 1, "speed": 1.0, "speed_by_subspace": {"cnn": 40}},
                "v100": {"count": 2, "speed": 1.0, "speed_by_subspace": {"cnn": 15}},
                "cpu": {"count": 8, "speed": 1.0},
            },
            "rounds": 6,
            "trials_per_round": 8,
            "execution": "async",
        },
        "budget": 48,
        "seeds": 4,
        "expect": ["valid", "no_idle", "mostly_on:a100+v100:cnn"],
    },
    {
        "name": "async_one_trial_plans_single_gpu_specialist",
        "why": "With trials_per_round 1 under async, a CPU worker's one-trial plan is often the "
        "GPU's cnn trial; the docs say it asks up to 4 plans first, so cnn must still "
        "run mostly on the single GPU.",
        "spec": {
            "space": BASE3,
            "hardware": {
                "gpu": {"count": 1, "speed": 1.0, "speed_by_subspace": {"cnn": 20}},
                "cpu": {"count": 6, "speed": 1.0},
            },
            "rounds": 40,
            "trials_per_round": 1,
            "execution": "async",
        },
        "budget": 40,
        "seeds": 4,
        "expect": ["valid", "no_idle", "mostly_on:gpu:cnn"],
    },
    {
        "name": "async_class_allowed_only_a_specialists_subspace",
        "why": "tpu may run only cnn, whose specialist is the gpu, so the windows rarely give "
        "it work; it is not refused (cnn allows it), and its workers must neither crash "
        "the async driver nor run sub-spaces outside their _classes.",
        "spec": {
            "space": _space(
                svm_linear=_with(SVM_LINEAR, _classes=["cpu", "gpu"]),
                svm_rbf=_with(SVM_RBF, _classes=["cpu", "gpu"]),
                cnn=_with(CNN, _classes=["gpu", "tpu"]),
            ),
            "hardware": {
                "gpu": {"count": 1, "speed": 1.0, "speed_by_subspace": {"cnn": 20}},
                "tpu": {"count": 1, "speed": 1.0},
                "cpu": {"count": 4, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
            "execution": "async",
        },
        "budget": 40,
        "seeds": 4,
        "expect": [
            "valid",
            "no_idle",
            "never_on:tpu:svm_linear",
            "never_on:tpu:svm_rbf",
            "never_on:cpu:cnn",
            "mostly_on:gpu:cnn",
        ],
    },
    # --- classes of one speed for everything: spreading and measuring ----------------------
    {
        "name": "one_fast_worker_many_slow_async_measures_everywhere",
        "why": "With no specialty declared, every class gets a trial of each sub-space it may "
        "run (to measure it) and the lead is spread; a one-worker fast class next to 12 "
        "slow workers must get its measuring trials and the search must finish.",
        "spec": {
            "space": BASE3,
            "hardware": {
                "fast": {"count": 1, "cpus": 4, "speed": 4.0},
                "slow": {"count": 12, "cpus": 1, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
            "execution": "async",
            "seed": 7,
        },
        "budget": 40,
        "expect": [
            "valid",
            "no_idle",
            "some_on:fast:cnn",
            "some_on:slow:cnn",
            "some_on:fast:svm_rbf",
            "some_on:slow:svm_linear",
        ],
    },
    {
        "name": "below_threshold_speedup_is_no_specialty",
        "why": "speed 4 with cnn 5 is only 1.25x its own speed, so cnn has no specialist: it "
        "must get a measuring trial on the slow class too (and is spread when it leads).",
        "spec": {
            "space": BASE3,
            "hardware": {
                "fast": {"count": 2, "speed": 4.0, "speed_by_subspace": {"cnn": 5}},
                "slow": {"count": 4, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
            "rerank_every": 3,
        },
        "budget": 40,
        "expect": ["valid", "no_idle", "some_on:slow:cnn", "some_on:fast:cnn"],
    },
    {
        "name": "pipelined_rounds_with_restricted_specialist_subspace",
        "why": "Pipelined rounds plan while trials run and re-rank every 3 decided trials "
        "(not a divisor of the round size); cnn is restricted to its specialist and "
        "must never reach the cpu class, whoever leads.",
        "spec": {
            "space": _space(
                svm_linear=SVM_LINEAR, svm_rbf=SVM_RBF, cnn=_with(CNN, _classes=["gpu"])
            ),
            "hardware": {
                "gpu": {"count": 1, "speed": 1.0, "speed_by_subspace": {"cnn": 8}},
                "cpu": {"count": 3, "speed": 1.0},
            },
            "rounds": 5,
            "trials_per_round": 8,
            "pipeline_depth": 2,
            "rerank_every": 3,
        },
        "budget": 40,
        "seeds": 4,
        "expect": ["valid", "no_idle", "never_on:cpu:cnn"],
    },
    {
        "name": "single_class_single_worker_one_trial_rounds",
        "why": "The smallest spec: one class of one worker, "
        "rounds of one trial, rerank_every left to its new default (trials_per_round "
        "= 1), on a product space with a nested exclusive; it must run its budget.",
        "spec": {
            "space": {
                "model": {
                    "exclusive": {
                        "svm_rbf": SVM_RBF,
                        "cnn": _with(
                            CNN,
                            opt={
                                "exclusive": {
                                    "sgd": {"momentum": {"uniform": [0.0, 0.99]}},
                                    "adam": {"beta1": {"uniform": [0.8, 0.999]}},
                                }
                            },
                        ),
                    }
                },
                "batch": {"choice": [16, 32, 64]},
            },
            "hardware": {
                "only": {"count": 1, "cpus": 2, "speed": 1.0},
            },
            "rounds": 24,
            "trials_per_round": 1,
        },
        "budget": 24,
        "expect": ["valid", "no_idle"],
    },
    # --- invalid specs: one line naming the key --------------------------------------------
    {
        "name": "rerank_every_zero_rejected",
        "why": "rerank_every is K, re-rank once K more trials are decided; 0 is meaningless and "
        "must be refused naming hpo.rerank_every, not taken as 'never' or 'default'.",
        "spec": {
            "space": BASE3,
            "hardware": {"fast": {"count": 1, "speed": 2.0}, "slow": {"count": 1, "speed": 1.0}},
            "rounds": 5,
            "trials_per_round": 8,
            "rerank_every": 0,
        },
        "budget": 40,
        "expect": ["rejected"],
    },
    {
        "name": "rerank_every_negative_rejected",
        "why": "A negative K (a user's -1 meaning 'every trial' or 'never') must be refused "
        "before any trial with one line naming hpo.rerank_every.",
        "spec": {
            "space": BASE3,
            "hardware": {"fast": {"count": 2, "speed": 2.0}, "slow": {"count": 2, "speed": 1.0}},
            "rounds": 5,
            "trials_per_round": 8,
            "rerank_every": -1,
            "execution": "async",
        },
        "budget": 40,
        "expect": ["rejected"],
    },
    {
        "name": "rerank_every_fractional_rejected",
        "why": "K counts trials; 2.5 is not a count and must be refused naming "
        "hpo.rerank_every rather than silently truncated or compared as a float.",
        "spec": {
            "space": BASE3,
            "hardware": {"fast": {"count": 1, "speed": 2.0}, "slow": {"count": 3, "speed": 1.0}},
            "rounds": 5,
            "trials_per_round": 8,
            "rerank_every": 2.5,
        },
        "budget": 40,
        "expect": ["rejected"],
    },
    {
        "name": "class_left_out_by_every_subspace_despite_specialty",
        "why": "A class that no sub-space may run is refused; here it even declares a cnn "
        "specialty, but every sub-space's _classes leaves it out, so it must still be "
        "refused (its declared specialty must not let it in).",
        "spec": {
            "space": _space(
                svm_linear=_with(SVM_LINEAR, _classes=["cpu"]),
                svm_rbf=_with(SVM_RBF, _classes=["cpu"]),
                cnn=_with(CNN, _classes=["cpu"]),
            ),
            "hardware": {
                "cpu": {"count": 4, "speed": 1.0},
                "gpu": {"count": 1, "speed": 1.0, "speed_by_subspace": {"cnn": 20}},
            },
            "rounds": 5,
            "trials_per_round": 8,
        },
        "budget": 40,
        "expect": ["rejected"],
    },
]


def _copy(x):
    # independent copies, so no two cases share a nested dict or list
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy(v) for v in x]
    return x


CASES = [_copy(c) for c in CASES]
