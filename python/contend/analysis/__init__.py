"""Statistics for contend results: one statistic per function, one topic per module.

* :mod:`.impact`     Congestion Impact (GPCNeT eq. 1-2)
* :mod:`.histogram`  mean and quantiles of log-bucketed histograms
* :mod:`.welch`      Welch's unequal-variance t-test and significance markers
* :mod:`.bootstrap`  seeded percentile-bootstrap intervals (samples and histograms)
* :mod:`.tinterval`  Student-t confidence interval of a mean (samples or summary)
"""

from .bootstrap import bootstrap_histogram_impact, bootstrap_interval
from .histogram import histogram_mean, histogram_quantile, histogram_tail_99
from .impact import congestion_impact, performance_difference_pct
from .tinterval import mean_interval, mean_interval_from_summary
from .welch import WelchResult, significance_marker, welch_t_test, welch_t_test_from_summary

__all__ = [
    "WelchResult",
    "bootstrap_histogram_impact",
    "bootstrap_interval",
    "congestion_impact",
    "histogram_mean",
    "histogram_quantile",
    "histogram_tail_99",
    "mean_interval",
    "mean_interval_from_summary",
    "performance_difference_pct",
    "significance_marker",
    "welch_t_test",
    "welch_t_test_from_summary",
]
