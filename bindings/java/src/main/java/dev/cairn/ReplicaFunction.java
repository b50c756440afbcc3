package dev.cairn;

import java.util.List;

/**
 * A step {@link MirroredStrategy#run} calls once per replica, in parallel, each on the strategy's
 * thread for that replica. Its tensors belong to the caller of {@code run}. An exception fails the
 * run: the other replicas' all-reduces end at once and {@code run} throws.
 */
@FunctionalInterface
public interface ReplicaFunction {
  /**
   * Runs the step for one replica.
   *
   * @param replica the replica (its id, device, context and all-reduce), valid during the call
   * @return the replica's tensors (an empty list for none)
   * @throws Exception to fail the run
   */
  List<Tensor> apply(Replica replica) throws Exception;
}
