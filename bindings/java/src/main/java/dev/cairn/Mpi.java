package dev.cairn;

import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongBinaryOperator;

/**
 * This process's place in an MPI communicator (cairn_mpi): one member per process, launched by
 * mpirun, whose collectives combine tensors across the processes. On it, {@link
 * MirroredStrategy#multiWorker} trains a model with {@code fit} across the processes, and {@link
 * CheckpointManager#shard} splits each save among them. See docs/mpi.md.
 *
 * <pre>{@code
 * try (Mpi mpi = Mpi.init(ctx, Duration.ofMinutes(1));
 *     Tensor mine = Tensor.scalar(ctx, (float) mpi.rank());
 *     Tensor sum = mpi.allReduce(Reduction.SUM, mine)) {   // 0 + 1 + ... on every rank
 * }
 * }</pre>
 *
 * <p>libcairn does not link MPI: the first {@link #init} loads the plugin libcairn_mpi.so from
 * $CAIRN_MPI_PLUGIN, else beside libcairn.so, else the loader's path, and throws UNAVAILABLE naming
 * where it looked. Without mpirun the world is this one process. Every process must issue the same
 * collectives in the same order with the same dtypes and shapes; ranks that disagree all get
 * INVALID_ARGUMENT. A call that waits longer than the timeout throws DEADLINE_EXCEEDED naming the
 * call and the rank, after which every call throws FAILED_PRECONDITION: end the job.
 *
 * <p>Thread-safe (the C handle serializes its calls). Close it when done; MPI is finalized when the
 * last user of Cairn's initialization (an Mpi, a strategy or a sharded manager made from it) is
 * freed, and cannot start again in the process.
 */
public final class Mpi extends NativeHandle {
  private Mpi(long handle) {
    super(handle, CairnNative::mpiFree);
  }

  /**
   * Joins the job's communicator (a private copy of MPI_COMM_WORLD), initializing MPI unless the
   * process already has.
   *
   * @param ctx the context
   * @param timeout how long each collective waits for the other ranks (at least 1 ms)
   * @return the handle, which the caller closes
   * @throws CairnException UNAVAILABLE without the plugin or MPI, FAILED_PRECONDITION when MPI
   *     cannot start (again), INVALID_ARGUMENT for a timeout below 1 ms
   */
  public static Mpi init(CairnContext ctx, Duration timeout) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.compareTo(Duration.ofMillis(1)) < 0) {
      throw new CairnException(Code.INVALID_ARGUMENT, "Mpi.init: the timeout " + timeout + " is below 1 ms");
    }
    long ms = timeout.compareTo(Duration.ofMillis(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : timeout.toMillis();
    long c = ctx.handle();
    try {
      return new Mpi(CairnNative.mpiInit(c, ms));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * This process's rank, 0 .. size - 1.
   *
   * @return the rank
   */
  public int rank() {
    long h = handle();
    try {
      return CairnNative.mpiRank(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The number of processes.
   *
   * @return the number of processes
   */
  public int size() {
    long h = handle();
    try {
      return CairnNative.mpiSize(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The reduction of {@code value} across the processes, the same on every rank. Float16 and
   * bfloat16 reduce in float32; the mean of integers truncates.
   *
   * @param reduction sum, mean, min or max
   * @param value this rank's tensor
   * @return a new tensor of value's dtype and shape on its device, which the caller closes
   * @throws CairnException INVALID_ARGUMENT for a dtype that does not reduce or ranks that disagree
   */
  public Tensor allReduce(Reduction reduction, Tensor value) {
    Objects.requireNonNull(reduction, "reduction");
    return collective(value, (h, v) -> CairnNative.mpiAllReduce(h, reduction.value(), v));
  }

  /**
   * Rank {@code root}'s value on every rank (each passes a tensor of the same dtype and shape).
   *
   * @param root the rank whose value everyone gets
   * @param value this rank's tensor
   * @return a new tensor on value's device, which the caller closes
   * @throws CairnException INVALID_ARGUMENT for a root outside 0 .. size - 1, a string tensor or
   *     ranks that disagree
   */
  public Tensor broadcast(int root, Tensor value) {
    return collective(value, (h, v) -> CairnNative.mpiBroadcast(h, root, v));
  }

  /**
   * Every rank's value concatenated along dimension 0 in rank order (a scalar gives a vector of
   * {@link #size()} elements).
   *
   * @param value this rank's tensor
   * @return a new tensor on value's device, which the caller closes
   * @throws CairnException INVALID_ARGUMENT for a string tensor or ranks that disagree
   */
  public Tensor allGather(Tensor value) {
    return collective(value, CairnNative::mpiAllGather);
  }

  /** Runs {@code call} on this handle and value's, wrapping the new tensor it returns. */
  private Tensor collective(Tensor value, LongBinaryOperator call) {
    Objects.requireNonNull(value, "value");
    long h = handle();
    long v = value.handle();
    try {
      return new Tensor(call.applyAsLong(h, v));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(value);
    }
  }

  /** Returns once every rank has called it. */
  public void barrier() {
    long h = handle();
    try {
      CairnNative.mpiBarrier(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "Mpi(closed)" : "Mpi(rank " + rank() + " of " + size() + ")";
  }
}
