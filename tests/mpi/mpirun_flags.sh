# Sourced by the MPI test and benchmark scripts: mpirun's flags for these machines (FORMATS.md):
# root allowed (CI runs as root), ranks oversubscribing 2 cores without binding and yielding when
# idle, loopback transports only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
CAIRN_MPIRUN_FLAGS=(--oversubscribe --bind-to none --mca mpi_yield_when_idle 1
                    --mca btl tcp,self,vader --mca btl_tcp_if_include lo)
