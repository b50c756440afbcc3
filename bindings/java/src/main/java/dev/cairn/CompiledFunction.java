package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A compiled function (tf.function): a Java lambda traced into a graph the first time it is
 * called with a new input signature (each input's dtype and shape), then replayed.
 *
 * <pre>{@code
 * try (CompiledFunction f = CompiledFunction.create(ctx, "square_plus_v", 1,
 *     (c, in) -> {
 *       try (Tensor sq = Ops.mul(c, in[0], in[0]); Tensor v = var.read()) {
 *         return new Tensor[] {Ops.add(c, sq, v)};
 *       }
 *     })) {
 *   Tensor y = f.call(x)[0]; // traces, then runs the graph
 *   Tensor z = f.call(x2)[0]; // same signature: replays, the lambda is not entered
 * }
 * }</pre>
 *
 * <p><b>Tracing.</b> While the body runs, the ordinary API records instead of computing: ops,
 * layers, variable reads and assigns, a {@link GradientTape}, an {@link Optimizer}. Its tensors
 * are symbolic (their values cannot be read there). The body runs on the thread calling {@link
 * #call}, only while tracing: a side effect in it (a counter, a print) happens once per trace, not
 * once per call. Variables are captured by reference (a replay reads and writes their live
 * values); eager tensors the body uses are captured by value when it is traced.
 *
 * <p><b>Tensors.</b> The body's {@code inputs} are closed after it returns. The function takes the
 * tensors the body returns and closes them (returning an input is fine); return a copy of a tensor
 * you keep using elsewhere. The tensors {@link #call} returns are new and the caller closes them.
 *
 * <p><b>Outputs.</b> The output count is fixed when the function is created: every trace must
 * return that many tensors, and every call returns that many.
 *
 * <p><b>Errors.</b> An exception thrown by the body makes {@link #call} throw a {@link
 * CairnException} whose cause is that exception (code UNKNOWN, or the code of a CairnException
 * the body threw); an {@link Error} is rethrown as is. Nothing is cached then: the next call with
 * that signature traces again. Close the function to release the body; a daemon
 * thread frees one collected unclosed.
 */
public final class CompiledFunction extends NativeHandle {
  /** The traced body: symbolic inputs in, outputs out (as many as the function's count). */
  @FunctionalInterface
  public interface Body {
    /**
     * Computes the outputs from the inputs.
     *
     * @param ctx the context to record into
     * @param inputs the inputs (symbolic while tracing), closed after the body returns
     * @return the outputs, which the function takes (and closes)
     * @throws Exception anything; {@link CompiledFunction#call} then throws a CairnException caused by it
     */
    Tensor[] apply(CairnContext ctx, Tensor[] inputs) throws Exception;
  }

  private final String name;
  private final int numOutputs;

  private CompiledFunction(long handle, String name, int numOutputs) {
    super(handle, CairnNative::functionFree);
    this.name = name;
    this.numOutputs = numOutputs;
  }

  /**
   * A function named {@code name} (for messages and dumps) returning {@code numOutputs} tensors.
   *
   * @param ctx the context
   * @param name the name
   * @param numOutputs how many tensors each branch or body returns
   * @param body the body, traced on first call of each input signature
   * @return a function named {@code name} (for messages and dumps) returning {@code numOutputs} tensors
   */
  public static CompiledFunction create(CairnContext ctx, String name, int numOutputs, Body body) {
    return create(ctx, name, numOutputs, body, null);
  }

  /**
   * Like {@link #create(CairnContext, String, int, Body)} with options (null: the defaults).
   *
   * @param ctx the context
   * @param name the name
   * @param numOutputs how many tensors each branch or body returns
   * @param body the body, traced on first call of each input signature
   * @param options the options (null: every default)
   * @return the new compiled function, which the caller closes
   */
  public static CompiledFunction create(CairnContext ctx, String name, int numOutputs, Body body, Options options) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(body, "body");
    if (numOutputs < 0) throw new IllegalArgumentException("numOutputs must be >= 0, got " + numOutputs);
    if (options == null) options = new Options();
    int n = options.inputSignature == null ? 0 : options.inputSignature.length;
    int[] dtypes = options.inputSignature == null ? null : new int[n];
    Object[] shapes = options.inputSignature == null ? null : new Object[n];
    for (int i = 0; i < n; ++i) {
      dtypes[i] = options.inputSignature[i].dtype().value();
      shapes[i] = options.inputSignature[i].shape();
    }
    // The id stays registered until the C library releases it (cairn_function_free); on a failed
    // create the library never took it, so it is unregistered here.
    String what = "function '" + name + "'";
    long id = Callbacks.registerFunctionFn((c, in, out) -> runBody(what, numOutputs, body, c, in, out));
    long c = ctx.handle();
    try {
      long h = CairnNative.functionCreate(
          c, NativeResources.cstr(name), id, options.set, dtypes, shapes, options.retraceWarning, options.staticInputs);
      return new CompiledFunction(h, name, numOutputs);
    } catch (RuntimeException | Error e) {
      Callbacks.unregisterFunctionFn(id);
      throw e;
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  // One call of a callback body (a trace, or a branch of ControlFlow): wraps the C library's
  // handles, runs the body, and hands shares of its results to C (which takes them). Everything
  // the body got or returned is closed before returning. `what` names the body in messages.
  static void runBody(String what, int numOutputs, Body body, long ctxHandle, long[] in, long[] out)
      throws Exception {
    CairnContext ctx = CairnContext.borrow(ctxHandle);
    Tensor[] inputs = new Tensor[in.length];
    try {
      for (int i = 0; i < in.length; ++i) inputs[i] = new Tensor(CairnNative.tensorShare(in[i]));
      handOver(what, numOutputs, body.apply(ctx, inputs), out);
    } finally {
      for (Tensor t : inputs) if (t != null) t.close();
      ctx.close();
    }
  }

  // Checks a callback's results (numOutputs non-null tensors) and puts a new handle of each into
  // `out` for the C library, which takes them; closes the results either way.
  static void handOver(String what, int numOutputs, Tensor[] results, long[] out) {
    long[] shared = new long[out.length];
    int nShared = 0;
    try {
      if (results == null) throw new NullPointerException(what + " returned null");
      if (results.length != numOutputs) {
        throw new IllegalStateException(what + " returned " + results.length + " tensor(s), expected " + numOutputs);
      }
      for (; nShared < results.length; ++nShared) {
        Tensor r = results[nShared];
        if (r == null) throw new NullPointerException(what + " returned a null output " + nShared);
        shared[nShared] = CairnNative.tensorShare(r.handle());
      }
      System.arraycopy(shared, 0, out, 0, nShared);
      nShared = 0; // the C library owns them now
    } finally {
      for (int i = 0; i < nShared; ++i) CairnNative.tensorFree(shared[i]);
      if (results != null) {
        for (Tensor r : results) if (r != null) r.close();
      }
    }
  }

  /**
   * Options for a new function; each starts at the C API's default. Not thread-safe to mutate.
   *
   * @return new options, each at its default
   */
  public static Options options() {
    return new Options();
  }

  /** The options of cairn_function_create. */
  public static final class Options {
    private long set; // CairnNative.FUNCTION_OPTIONS_* of the fields set
    private TensorSpec[] inputSignature;
    private int retraceWarning;
    private long[] staticInputs;

    /** Options at their defaults (the same as {@code options()}). */
    public Options() {}

    /**
     * Static inputs (tf.function's rule for Python scalars): these inputs' values, not only their
     * dtypes and shapes, key the trace cache. The body gets them with values it may read (a loop
     * count, a flag) and the trace bakes them in: a new value retraces. Each is a numeric or bool
     * tensor of at most 1024 elements. Functions with static inputs cannot be exported yet.
     *
     * @param indexes the positions of the static inputs
     * @return these options
     */
    public Options staticInputs(int... indexes) {
      Objects.requireNonNull(indexes, "indexes");
      long[] copy = new long[indexes.length];
      for (int i = 0; i < indexes.length; ++i) {
        if (indexes[i] < 0) throw new IllegalArgumentException("staticInputs: index " + indexes[i] + " is negative");
        copy[i] = indexes[i];
      }
      this.staticInputs = copy;
      set |= CairnNative.FUNCTION_OPTIONS_STATIC_INPUTS;
      return this;
    }

    /**
     * Keys traces on these specs instead of each call's own shapes: a -1 dimension accepts any
     * size, so one trace serves them all. Calls whose inputs do not match fail with
     * INVALID_ARGUMENT. Default: none.
     *
     * @param specs one spec per input
     * @return these options
     */
    public Options inputSignature(TensorSpec... specs) {
      Objects.requireNonNull(specs, "specs");
      for (int i = 0; i < specs.length; ++i) Objects.requireNonNull(specs[i], "specs[" + i + "]");
      this.inputSignature = specs.clone();
      set |= CairnNative.FUNCTION_OPTIONS_INPUT_SIGNATURE;
      return this;
    }

    /**
     * Warns through the context's log when the trace count reaches this; default 5, 0 = never.
     *
     * @param traces the warning threshold (0: off)
     * @return these options
     */
    public Options retraceWarning(int traces) {
      if (traces < 0) throw new IllegalArgumentException("retraceWarning must be >= 0, got " + traces);
      this.retraceWarning = traces;
      set |= CairnNative.FUNCTION_OPTIONS_RETRACE_WARNING;
      return this;
    }
  }

  /**
   * The function's name.
   *
   * @return the function's name
   */
  public String name() {
    return name;
  }

  /**
   * How many tensors each call returns.
   *
   * @return how many tensors each call returns
   */
  public int numOutputs() {
    return numOutputs;
  }

  /**
   * Calls the function: traces the body on a new input signature, replays the cached graph
   * otherwise. Returns {@link #numOutputs()} new tensors, which the caller closes.
   *
   * @param inputs the input tensors
   * @return new tensors, which the caller closes
   */
  public Tensor[] call(Tensor... inputs) {
    Objects.requireNonNull(inputs, "inputs");
    long[] in = new long[inputs.length];
    for (int i = 0; i < in.length; ++i) in[i] = Objects.requireNonNull(inputs[i], "inputs[" + i + "]").handle();
    long[] out = new long[numOutputs];
    long h = handle();
    Callbacks.takeHostError(); // forget what a raw-layer caller left behind
    try {
      CairnNative.functionCall(h, in, out);
    } catch (CairnException e) {
      Throwable host = Callbacks.takeHostError();
      if (host == null) throw e;
      throw hostFailure("function '" + name + "'", host);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(inputs);
    }
    Tensor[] result = new Tensor[numOutputs];
    for (int i = 0; i < numOutputs; ++i) result[i] = new Tensor(out[i]);
    return result;
  }

  // What call() (or a ControlFlow call) throws for an exception a Java body threw: a
  // CairnException "<where>: <what was thrown>" caused by it, with its code when it is a
  // CairnException, else UNKNOWN. An Error is rethrown as is.
  static RuntimeException hostFailure(String where, Throwable host) {
    if (host instanceof Error) throw (Error) host;
    Code code = host instanceof CairnException ? ((CairnException) host).code() : Code.UNKNOWN;
    String what = host instanceof CairnException ? ((CairnException) host).detail() : host.getMessage();
    if (what == null) what = host.getClass().getName();
    if (!(host instanceof CairnException)) what = host.getClass().getSimpleName() + ": " + what;
    CairnException e = new CairnException(code, where + ": " + what);
    e.initCause(host);
    return e;
  }

  /**
   * How many tensors trace {@code traceIndex} returns (what {@link #call} returns for that
   * signature; useful for a {@link #load loaded} function, whose count the file does not give).
   * OUT_OF_RANGE past {@link #numTraces()}.
   *
   * @param traceIndex the index of the trace, from 0
   * @return the number of tensors the trace returns
   */
  public int numOutputs(long traceIndex) {
    long h = handle();
    try {
      return Math.toIntExact(CairnNative.functionNumOutputs(h, traceIndex));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * How many times the function has been traced (one per distinct input signature).
   *
   * @return how many times the function has been traced (one per distinct input signature)
   */
  public long numTraces() {
    long h = handle();
    try {
      return CairnNative.functionNumTraces(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The graph of trace {@code index} (0 = the first) as text: one line per node with its op,
   * attributes, inputs and output dtypes and shapes. OUT_OF_RANGE past {@link #numTraces()}.
   *
   * @param index the zero-based index
   * @return the graph as text
   */
  public String dump(long index) {
    long h = handle();
    try {
      return CairnNative.functionDump(h, index);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The input signature of trace {@code index}, e.g. "float32[2,3], int32[]".
   *
   * @param index the zero-based index
   * @return the input signature of trace {@code index}
   */
  public String signature(long index) {
    long h = handle();
    try {
      return CairnNative.functionSignature(h, index);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * <b>Experimental</b> (graph export, C <code>CAIRN_EXPERIMENTAL</code>): may change in a minor release.
   *
   * Writes every trace, with the current values of the variables they read or write, to {@code
   * path} (replaced atomically; docs/graph_export.md). {@link #load} in any language (C:
   * cairn_function_load) reads it back. FAILED_PRECONDITION before the first call; UNIMPLEMENTED
   * when a trace captured a string constant.
   *
   * @param path the file or checkpoint path
   */
  public void export(String path) {
    Objects.requireNonNull(path, "path");
    long h = handle();
    try {
      CairnNative.functionExport(h, NativeResources.cstr(path));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * <b>Experimental</b> (graph export, C <code>CAIRN_EXPERIMENTAL</code>): may change in a minor release.
   *
   * Loads a function written by {@link #export} (from any language) into {@code ctx}. It has no
   * Java body: the first call for each input shape re-traces the stored graph, and it owns fresh
   * variables initialised from the file. A call whose inputs fit no stored signature throws
   * NOT_FOUND, listing the stored ones. The file does not say how many tensors the function
   * returns, so {@code numOutputs} does (another count fails at the call with INVALID_ARGUMENT).
   * Its {@link #name()} is the path. Errors: NOT_FOUND for a missing file, DATA_LOSS for a damaged
   * one, INVALID_ARGUMENT for a file that is not an exported function.
   *
   * @param ctx the context
   * @param path the file or checkpoint path
   * @param numOutputs how many tensors each branch or body returns
   * @return the new compiled function, which the caller closes
   */
  public static CompiledFunction load(CairnContext ctx, String path, int numOutputs) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(path, "path");
    if (numOutputs < 0) throw new IllegalArgumentException("numOutputs must be >= 0, got " + numOutputs);
    long c = ctx.handle();
    try {
      return new CompiledFunction(CairnNative.functionLoad(c, NativeResources.cstr(path)), path, numOutputs);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * <b>Experimental</b> (graph export, C <code>CAIRN_EXPERIMENTAL</code>): may change in a minor release.
   *
   * The graph of trace {@code index} as TensorFlow GraphDef text ({@code node { name: ... op: ...
   * }}) for TensorBoard's graph view. OUT_OF_RANGE past {@link #numTraces()}.
   *
   * @param index the zero-based index
   * @return the GraphDef text
   */
  public String graphdef(long index) {
    long h = handle();
    try {
      return CairnNative.functionGraphdef(h, index);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "CompiledFunction(closed)" : "CompiledFunction(" + name + ")";
  }
}
