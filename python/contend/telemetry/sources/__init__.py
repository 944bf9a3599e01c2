"""Counter sources, one module each: InfiniBand sysfs (ib_sysfs), HPE cxi
telemetry (cxi), LDMS store_csv (ldms), the emulated cluster's stats CSV
(cluster) and the simulator's counter CSV (sim).  Each turns its input into a
format-A frame (contend.telemetry.samples); live sources also sample."""

from pathlib import Path

from ..errors import TelemetryError


def device_dirs(root: Path, devices, what: str, hint: str) -> list:
    """The device directories under a sysfs class root: all of them, or the
    ones asked for (each must exist).  what names the devices in errors
    ("cxi", "InfiniBand"); hint says how to point elsewhere."""
    if not root.is_dir():
        raise TelemetryError(f"{root}: no such directory (no {what} devices here? {hint})")
    found = sorted(p.name for p in root.iterdir() if p.is_dir())
    if devices:
        missing = [d for d in devices if d not in found]
        if missing:
            raise TelemetryError(
                f"{root}: no device {', '.join(missing)} (found: {', '.join(found) or 'none'})"
            )
        found = list(devices)
    if not found:
        raise TelemetryError(f"{root}: no {what} device directory")
    return found
