package dev.cairn;

import java.lang.ref.Reference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * tf.distribute.MirroredStrategy: one replica per logical device ("cpu:0", "cpu:1" of a split
 * CPU, or "vulkan:0", "vulkan:1"). Variables made inside its {@link #scope()} are mirrored on every
 * device, and a model created and compiled there trains with {@code fit} on every replica; {@link
 * #run} calls a step once per replica, in parallel, with all-reduces across the replicas ({@link
 * Replica#allReduce}). See docs/distribute.md.
 *
 * <pre>{@code
 * try (MirroredStrategy strategy = MirroredStrategy.create(ctx)) {   // every CPU device
 *   List<List<Tensor>> sums = strategy.run(r -> r.allReduce(Reduction.SUM, Tensor.scalar(r.context(), 1f)));
 * }
 * }</pre>
 *
 * <p>Thread-safe, one run at a time (a run started from inside a step is FAILED_PRECONDITION).
 * Close it when done; a model compiled with it keeps what it needs.
 */
public final class MirroredStrategy extends NativeHandle {
  private final CairnContext ctx;
  private final List<String> devices;

  private MirroredStrategy(long handle, CairnContext ctx) {
    super(handle, CairnNative::strategyFree);
    this.ctx = ctx;
    int n = Math.toIntExact(CairnNative.strategyNumReplicas(handle));
    List<String> names = new ArrayList<>(n);
    for (int r = 0; r < n; ++r) names.add(CairnNative.strategyDevice(handle, r));
    this.devices = Collections.unmodifiableList(names);
  }

  /**
   * A strategy over {@code devices} (distinct logical devices of one type), or over every logical
   * device of the default device's type when none is given.
   *
   * @param ctx the context
   * @param devices the replicas' devices, or none for every device of the default type
   * @return the new strategy, which the caller closes
   * @throws CairnException NOT_FOUND for an unknown device, INVALID_ARGUMENT for a duplicate or a
   *     mix of types
   */
  public static MirroredStrategy create(CairnContext ctx, String... devices) {
    return create(ctx, null, devices);
  }

  /**
   * Like {@link #create(CairnContext, String...)} with the collective timeout: how long a replica
   * waits in an all-reduce for the others before DEADLINE_EXCEEDED naming the replicas that did
   * not arrive (null: the default, 120 s).
   *
   * @param ctx the context
   * @param collectiveTimeout the timeout (at least 1 ms), or null for the default
   * @param devices the replicas' devices, or none for every device of the default type
   * @return the new strategy, which the caller closes
   */
  public static MirroredStrategy create(CairnContext ctx, Duration collectiveTimeout, String... devices) {
    Objects.requireNonNull(ctx, "ctx");
    Object[] names = new Object[devices.length];
    for (int i = 0; i < names.length; ++i) {
      names[i] = NativeResources.cstr(Objects.requireNonNull(devices[i], "devices[" + i + "]"));
    }
    long set = collectiveTimeout == null ? 0 : 1;
    long ms = collectiveTimeout == null ? 0 : collectiveTimeout.toMillis();
    try {
      return new MirroredStrategy(CairnNative.mirroredStrategyCreate(ctx.handle(), names, set, ms), ctx);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * tf.distribute.MultiWorkerMirroredStrategy: a strategy whose replicas are the processes of
   * {@code mpi}, this process's one replica (its id the rank) on ctx's CPU. A model made and
   * compiled in its {@link #scope()} trains with {@code fit} unchanged under mpirun: each dataset
   * element is a global batch of which every worker trains on its rows, the weights are broadcast
   * from rank 0 before the first step, the gradients are summed across the workers, and only rank 0
   * prints progress and runs the callbacks that write. Every worker must make the same calls with
   * the same data. The strategy shares mpi's communicator and timeout (mpi may be closed first);
   * its collectives and mpi's calls must come in the same order on every rank.
   *
   * @param ctx the context
   * @param mpi this process's communicator
   * @param options the options (null: every default)
   * @return the new strategy, which the caller closes
   * @throws CairnException INVALID_ARGUMENT for an mpi of another context
   */
  public static MirroredStrategy multiWorker(CairnContext ctx, Mpi mpi, MultiWorkerOptions options) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(mpi, "mpi");
    if (options == null) options = new MultiWorkerOptions();
    long c = ctx.handle();
    long m = mpi.handle();
    try {
      return new MirroredStrategy(
          CairnNative.multiWorkerStrategyCreate(c, m, options.set, options.checkReplicas ? 1 : 0), ctx);
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(mpi);
    }
  }

  /**
   * Options for {@link #multiWorker}; each starts at its default.
   *
   * @return new options, each at its default
   */
  public static MultiWorkerOptions multiWorkerOptions() {
    return new MultiWorkerOptions();
  }

  /** cairn_multi_worker_options. Not thread-safe to mutate. */
  public static final class MultiWorkerOptions {
    private long set; // CairnNative.MULTI_WORKER_OPTIONS_* of the fields set
    private boolean checkReplicas;

    /** Options at their defaults (the same as {@code multiWorkerOptions()}). */
    public MultiWorkerOptions() {}

    /**
     * A debug check: after every training step of a model compiled with the strategy, compare a
     * checksum of every weight across the workers and fail with INTERNAL naming the first variable
     * that differs (also on when the environment has CAIRN_CHECK_REPLICAS=1); default false. It
     * costs a copy of every weight and one all-gather per step.
     *
     * @param on whether to check
     * @return these options
     */
    public MultiWorkerOptions checkReplicas(boolean on) {
      this.checkReplicas = on;
      set |= CairnNative.MULTI_WORKER_OPTIONS_CHECK_REPLICAS;
      return this;
    }
  }

  /**
   * The number of replicas.
   *
   * @return the number of replicas
   */
  public int numReplicas() {
    return devices.size();
  }

  /**
   * The replicas' logical devices, replica 0's first.
   *
   * @return the devices (unmodifiable)
   */
  public List<String> devices() {
    return devices;
  }

  /**
   * Enters the strategy's scope on this thread until the returned scope is closed.
   *
   * @return the open scope; close it on this thread (try-with-resources)
   */
  public StrategyScope scope() {
    return new StrategyScope(this);
  }

  /**
   * Runs {@code body} inside the strategy's scope on this thread, leaving the scope when it returns
   * or throws.
   *
   * @param <T> what body returns
   * @param body the code to run in the scope
   * @return what body returned
   * @throws Exception what body threw
   */
  @SuppressWarnings("try") // the scope is there for its close()
  public <T> T scope(Callable<T> body) throws Exception {
    Objects.requireNonNull(body, "body");
    try (StrategyScope s = scope()) {
      return body.call();
    }
  }

  /**
   * Runs {@code body} inside the strategy's scope on this thread, leaving the scope when it returns
   * or throws.
   *
   * @param body the code to run in the scope
   */
  @SuppressWarnings("try") // the scope is there for its close()
  public void scope(Runnable body) {
    Objects.requireNonNull(body, "body");
    try (StrategyScope s = scope()) {
      body.run();
    }
  }

  /**
   * Calls {@code step} once per replica, in parallel, each on the strategy's thread for that
   * replica inside a device scope of its device, and waits for all of them.
   *
   * @param step the step
   * @return each replica's tensors, replica 0's first; the caller closes them
   * @throws CairnException when a step throws: with its code (UNKNOWN unless it threw a
   *     CairnException), the message naming the replica and its device ("replica 1 (cpu:1): ..."),
   *     and the step's exception as the cause (an Error is rethrown as is); the other replicas'
   *     all-reduces end at once. FAILED_PRECONDITION when called from inside a step.
   */
  public List<List<Tensor>> run(ReplicaFunction step) {
    Objects.requireNonNull(step, "step");
    int n = devices.size();
    AtomicReferenceArray<List<Tensor>> results = new AtomicReferenceArray<>(n);
    AtomicReferenceArray<Throwable> thrown = new AtomicReferenceArray<>(n);
    long h = handle();
    long id = Callbacks.registerReplicaFn((ctxHandle, replicaHandle, outputs) -> {
      CairnContext borrowed = CairnContext.borrow(ctxHandle);
      Replica replica = new Replica(replicaHandle, borrowed);
      int r = CairnNative.replicaId(replicaHandle);
      try {
        List<Tensor> out = step.apply(replica);
        results.set(r, out == null ? List.of() : List.copyOf(out));
      } catch (Throwable t) {
        thrown.set(r, t);
        throw t;
      } finally {
        replica.end();
        borrowed.close();
      }
    });
    try {
      CairnNative.strategyRun(h, id, new long[0]);
    } catch (CairnException e) {
      for (int r = 0; r < n; ++r) {
        List<Tensor> rs = results.get(r);
        if (rs != null) rs.forEach(Tensor::close);
      }
      for (int r = 0; r < n; ++r) {
        Throwable t = thrown.get(r);
        if (t == null) continue;
        if (t instanceof Error) throw (Error) t;
        throw new CairnException(e.code(), e.detail(), t);
      }
      throw e;
    } finally {
      Callbacks.unregisterReplicaFn(id);
      Reference.reachabilityFence(this);
    }
    List<List<Tensor>> all = new ArrayList<>(n);
    for (int r = 0; r < n; ++r) all.add(results.get(r));
    return Collections.unmodifiableList(all);
  }

  /**
   * Combines one tensor per replica (one output of {@link #run} from each, replica 0's first) into
   * one on replica 0's device, in replica order (strategy.reduce).
   *
   * @param reduction how the values combine
   * @param perReplica one tensor per replica
   * @return a new tensor, which the caller closes
   */
  public Tensor reduce(Reduction reduction, Tensor... perReplica) {
    Objects.requireNonNull(reduction, "reduction");
    long[] in = handles(perReplica);
    long h = handle();
    try {
      return new Tensor(CairnNative.strategyReduce(h, reduction.value(), in));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(perReplica);
    }
  }

  /**
   * Splits a global batch along dimension 0 into one part per replica (the first replicas take
   * one more row when it does not divide), each on its replica's device.
   *
   * @param global the global batch
   * @return one new tensor per replica, which the caller closes
   * @throws CairnException INVALID_ARGUMENT for a scalar or fewer rows than replicas
   */
  public List<Tensor> splitBatch(Tensor global) {
    Objects.requireNonNull(global, "global");
    long[] parts = new long[devices.size()];
    long h = handle();
    try {
      DistributeNative.splitBatch(h, global.handle(), parts);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(global);
    }
    return tensors(parts, 0, parts.length);
  }

  /**
   * The next global batch of {@code it}, each component split as {@link #splitBatch} does
   * (strategy.experimental_distribute_dataset). The iterator stays an ordinary one.
   *
   * @param it the iterator of global batches
   * @return {@code parts.get(r)}: replica r's components in the dataset's order (the caller closes
   *     them); null at the end of the data
   */
  public List<List<Tensor>> next(DatasetIterator it) {
    Objects.requireNonNull(it, "it");
    int k = it.names().size();
    long[] parts = new long[devices.size() * k];
    long h = handle();
    try {
      DistributeNative.iteratorNext(h, it.handle(), parts, k);
    } catch (CairnException e) {
      if (e.code() == Code.OUT_OF_RANGE) return null;
      throw e;
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(it);
    }
    List<List<Tensor>> out = new ArrayList<>(devices.size());
    for (int r = 0; r < devices.size(); ++r) out.add(tensors(parts, r * k, k));
    return Collections.unmodifiableList(out);
  }

  /**
   * sum(perExampleLoss) / globalBatchSize (tf.nn.compute_average_loss): a replica's loss scaled so
   * that the sum of the replicas' gradients is the gradient of the global batch's mean loss.
   *
   * @param ctx the context
   * @param perExampleLoss the replica's per-example losses
   * @param globalBatchSize the global batch size, at least 1
   * @return a new scalar tensor, which the caller closes
   */
  public static Tensor computeAverageLoss(CairnContext ctx, Tensor perExampleLoss, long globalBatchSize) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(perExampleLoss, "perExampleLoss");
    try {
      return new Tensor(CairnNative.computeAverageLoss(ctx.handle(), perExampleLoss.handle(), globalBatchSize));
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(perExampleLoss);
    }
  }

  /** Frees the strategy (its replica threads end). Closing twice does nothing. */
  @Override
  public void close() {
    super.close();
    Reference.reachabilityFence(ctx);
  }

  private static long[] handles(Tensor[] ts) {
    long[] hs = new long[ts.length];
    for (int i = 0; i < hs.length; ++i) hs[i] = Objects.requireNonNull(ts[i], "tensor " + i).handle();
    return hs;
  }

  private static List<Tensor> tensors(long[] handles, int from, int n) {
    List<Tensor> out = new ArrayList<>(n);
    for (long t : Arrays.copyOfRange(handles, from, from + n)) out.add(new Tensor(t));
    return Collections.unmodifiableList(out);
  }
}
