"""Counter sources, one module each: InfiniBand sysfs (ib_sysfs), HPE cxi
telemetry (cxi), LDMS store_csv (ldms), the emulated cluster's stats CSV
(cluster) and the simulator's counter CSV (sim).  Each turns its input into a
format-A frame (contend.telemetry.samples); live sources also sample."""
