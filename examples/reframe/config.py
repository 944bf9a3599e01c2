"""ReFrame configuration for contend's checks (contend_checks.py).

`local`: this machine, no batch system.  ReFrame's local scheduler runs the
job script here and Open MPI's mpirun starts the ranks (the `local` launcher
would start one process; contend needs MPI ranks).  The partition's extras
make every rank a virtual node (contend_virtual_nodes: 1), so the load test's
node split works on one host; as root, Open MPI needs the two
OMPI_ALLOW_RUN_AS_ROOT variables.  What one host measures is CPU and memory
contention, not a network.

A real cluster (commented below): Slurm and srun, one node per host.
  reframe -C examples/reframe/config.py -c examples/reframe/contend_checks.py -r
  reframe ... --system mycluster:compute -S ContendLoadCheck.num_tasks=512 \\
      -S ContendLoadCheck.num_tasks_per_node=8 -r"""

site_configuration = {
    "systems": [
        {
            "name": "local",
            "descr": "one host; MPI ranks as virtual nodes",
            "hostnames": [".*"],
            "partitions": [
                {
                    "name": "default",
                    "scheduler": "local",
                    "launcher": "mpirun",
                    "environs": ["builtin"],
                    "max_jobs": 1,
                    "env_vars": [
                        # more ranks than cores is fine for a functional check
                        ["OMPI_MCA_rmaps_base_oversubscribe", "1"],
                    ],
                    "extras": {"contend_virtual_nodes": 1},
                }
            ],
        },
        # {
        #     "name": "mycluster",
        #     "descr": "Slurm cluster: one contend node per host",
        #     "hostnames": [r"login\d+", r"nid\d+"],
        #     "partitions": [
        #         {
        #             "name": "compute",
        #             "scheduler": "slurm",
        #             "launcher": "srun",
        #             "access": ["--partition=compute", "--exclusive"],
        #             "environs": ["builtin"],
        #             "max_jobs": 4,
        #             # srun starts the MPI ranks: the site's PMI (pmix here)
        #             "env_vars": [["SLURM_MPI_TYPE", "pmix"]],
        #         }
        #     ],
        # },
    ],
    "logging": [
        {
            "handlers": [
                {"type": "stream", "name": "stdout", "level": "info", "format": "%(message)s"},
            ],
            "handlers_perflog": [
                {
                    # one line per performance variable, in
                    # <perflogdir>/<system>/<partition>/<check>.log
                    "type": "filelog",
                    "prefix": "%(check_system)s/%(check_partition)s",
                    "level": "info",
                    "format": (
                        "%(check_job_completion_time)s|%(check_name)s"
                        "|%(check_system)s:%(check_partition)s|%(check_perfvalues)s"
                    ),
                    # per variable: name=value|unit|reference|lower|upper|pass or fail
                    "format_perfvars": (
                        "%(check_perf_var)s=%(check_perf_value)s|%(check_perf_unit)s"
                        "|%(check_perf_ref)s|%(check_perf_lower_thres)s"
                        "|%(check_perf_upper_thres)s|%(check_perf_result)s|"
                    ),
                    "append": True,
                }
            ],
        }
    ],
}
