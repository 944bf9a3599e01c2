"""Emulated cluster on one host: ``contend cluster up|run|exec|stats|shape|show|down``.

Nodes are network namespaces, leaf and spine switches are bridges in a switch
namespace, and every link direction is shaped with an HTB rate and a bounded
FIFO (bfifo) queue, so that MPI traffic over TCP between namespaces really
queues and drops. See ``docs/emulated-cluster.md``.

Modules: ``topology`` (pure description and validation), ``netns`` (ip/tc
wrappers), ``shaping`` (qdiscs and counters), ``state`` (state directory),
``lifecycle`` (up/down, shaping on/off), ``launch`` (exec/run with mpirun), ``stats`` (link
counters), ``probe`` (TCP probes for tests and benchmarks), ``cli``.
"""

from .errors import ClusterError, UsageError
from .topology import ClusterSpec, describe, make_spec

__all__ = ["ClusterError", "ClusterSpec", "UsageError", "describe", "make_spec"]
