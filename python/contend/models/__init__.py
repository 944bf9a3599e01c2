"""Netscope's models (seeds/netscope-ics21.md sections 4.1, 4.2, 6.1; eq. 2-12).

* network latency from link stalls (eq. 6-12): :func:`fit_latency` on ping-pong
  RTT samples and PTs intervals, :func:`predict_one_way_ns`;
* application delay sensitivity (eq. 2-5): :func:`run_delivery` (M_a of one run,
  uniform and traffic-weighted), :func:`fit_runtime`, :func:`convergence`;
* inputs: :func:`load_paths` (paths JSON), :func:`load_training` (ping-pong
  training file), :func:`load_job_run` (``contend jobs`` results);
* model files: :func:`load_model_file`, :func:`load_latency_model`;
* the command line ``contend model`` in :mod:`contend.models.cli`.

docs/netscope.md describes the equations as implemented and the file formats.
"""

from .errors import ModelError
from .jobruns import JobRun, load_job_run
from .latency import LatencyFit, LatencyModel, error_summary, fit_latency, predict_one_way_ns
from .modelfile import load_latency_model, load_model_file
from .paths import PathSet, load_paths, parse_paths
from .queueing import PTS_CLAMP_PERCENT, Timeline, build_timeline, queueing_delay
from .sensitivity import (
    DeliveryConstants,
    RunDelivery,
    convergence,
    fit_runtime,
    normalised_sensitivity,
    run_delivery,
    traffic_link_weights,
    uniform_link_weights,
)
from .training import TrainingSet, load_training

__all__ = [
    "PTS_CLAMP_PERCENT",
    "DeliveryConstants",
    "JobRun",
    "LatencyFit",
    "LatencyModel",
    "ModelError",
    "PathSet",
    "RunDelivery",
    "Timeline",
    "TrainingSet",
    "build_timeline",
    "convergence",
    "error_summary",
    "fit_latency",
    "fit_runtime",
    "load_job_run",
    "load_latency_model",
    "load_model_file",
    "load_paths",
    "load_training",
    "normalised_sensitivity",
    "parse_paths",
    "predict_one_way_ns",
    "queueing_delay",
    "run_delivery",
    "traffic_link_weights",
    "uniform_link_weights",
]
