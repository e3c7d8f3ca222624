"""The campaign: which runs a tier needs, what they cost, which are cached.

- :mod:`~tcprepro.campaign.config`: the workflow config (figures, sweeps, tiers);
- :mod:`~tcprepro.campaign.runs`: one run, its typed overrides, path and cache key;
- :mod:`~tcprepro.campaign.plan`: the cost estimate, the cache check, the plan report;
- :mod:`~tcprepro.campaign.emulated`: which figures are emulated, and their batches.

Backends know nothing of figures: the campaign hands them scenarios.
"""

from tcprepro.campaign.config import (
    TIERS,
    WorkflowConfig,
    load_workflow_config,
    validate_workflow_config,
)
from tcprepro.campaign.plan import estimate_wall_s, is_cached, plan_report
from tcprepro.campaign.runs import Override, Run, cell_name, pending_reason

__all__ = [
    "TIERS",
    "Override",
    "Run",
    "WorkflowConfig",
    "cell_name",
    "estimate_wall_s",
    "is_cached",
    "load_workflow_config",
    "pending_reason",
    "plan_report",
    "validate_workflow_config",
]
