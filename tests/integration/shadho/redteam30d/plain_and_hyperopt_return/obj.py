"""Sub-space a returns a bare float; sub-space b returns a hyperopt-style dict with
'status': 'ok' (hyperopt.STATUS_OK), 'loss_variance' and 'eval_time'."""
import time


def evaluate(params, threads=1):
    x = float(params["x"])
    time.sleep(0.05)
    if params["model"] == "a":
        return (x - 0.3) ** 2
    return {"loss": (x - 0.3) ** 2, "status": "ok", "loss_variance": 0.01, "eval_time": 0.05}
