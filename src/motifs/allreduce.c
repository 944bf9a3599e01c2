/* allreduce: MPI_Allreduce (sum of doubles) on every sub-communicator at
 * once (GPCNeT "Multiple Allreduce"); latency per call. */
#include "allreduce_kernel.h"

static const contend_param_def params[] = {CONTEND_LOOP_PARAMS(100000, 1, 200, 1),
                                           ALLREDUCE_MSG_BYTES("8"), CONTEND_PARAM_END};

const contend_motif contend_motif_allreduce = {
    .name = "allreduce",
    .label = "Multiple Allreduce",
    .help = "MPI_Allreduce (sum) on every sub-communicator at once; latency per call",
    .role = CONTEND_ROLE_CANARY,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .setup = contend_allreduce_msg_bytes_setup,
    .validate = contend_allreduce_msg_bytes_validate,
    ALLREDUCE_MOTIF_HOOKS,
};
