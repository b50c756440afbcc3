package dev.cairn;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link ReplicaFunction} sees during {@link MirroredStrategy#run}: its replica, its logical
 * device and the context to run ops with (ops without inputs run on the replica's device). Valid
 * only during that call: afterwards every method throws FAILED_PRECONDITION.
 */
public final class Replica {
  private final long handle;
  private final CairnContext ctx;
  private volatile boolean done;

  Replica(long handle, CairnContext ctx) {
    this.handle = handle;
    this.ctx = ctx;
  }

  private long handle(String method) {
    if (done) {
      throw new CairnException(Code.FAILED_PRECONDITION, "Replica." + method + ": the replica's step has returned");
    }
    return handle;
  }

  void end() {
    done = true;
  }

  /**
   * The replica's index.
   *
   * @return 0 .. numReplicas - 1
   */
  public int id() {
    return CairnNative.replicaId(handle("id"));
  }

  /**
   * The replica's logical device.
   *
   * @return the device name, e.g. "cpu:1"
   */
  public String device() {
    return CairnNative.replicaDevice(handle("device"));
  }

  /**
   * The context to run the replica's ops with (borrowed for the step: do not close it).
   *
   * @return the context
   */
  public CairnContext context() {
    handle("context");
    return ctx;
  }

  /**
   * Combines {@code tensors} across the replicas: every replica calls it with tensors of the same
   * dtypes and shapes, in the same order, and each gets the results on its own device, reduced in
   * replica order whatever the arrival order (every replica gets the same bits).
   *
   * @param reduction how the values combine
   * @param tensors this replica's values
   * @return new tensors, one per input, which the caller closes
   * @throws CairnException DEADLINE_EXCEEDED when a replica does not arrive within the collective
   *     timeout, ABORTED when another replica failed, INVALID_ARGUMENT for mismatched inputs
   */
  public List<Tensor> allReduce(Reduction reduction, Tensor... tensors) {
    Objects.requireNonNull(reduction, "reduction");
    long h = handle("allReduce");
    long[] in = new long[tensors.length];
    for (int i = 0; i < in.length; ++i) in[i] = Objects.requireNonNull(tensors[i], "tensors[" + i + "]").handle();
    try {
      long[] out = CairnNative.replicaAllReduce(h, reduction.value(), in);
      List<Tensor> result = new ArrayList<>(out.length);
      for (long t : out) result.add(new Tensor(t));
      return result;
    } finally {
      java.lang.ref.Reference.reachabilityFence(tensors);
    }
  }
}
