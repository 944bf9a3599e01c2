"""Every claim of the reproduction report, in the report's order (one paper
after another).  Adding a claim: its record in the module of its paper
family, and that module's CLAIMS here."""

from __future__ import annotations

from . import fattree, gpcnet, netscope, stressbench

CLAIMS = (*gpcnet.CLAIMS, *stressbench.CLAIMS, *netscope.CLAIMS, *fattree.CLAIMS)
BY_ID = {c.id: c for c in CLAIMS}
