package dev.cairn;

import java.lang.ref.Reference;

/**
 * A Cairn context: devices, the default device, the thread pool, the log handler and the RNG seed.
 * Thread-safe: share one between threads. Close it when done; tensors made from it stay valid.
 * A context that is garbage collected without {@link #close()} is freed by a daemon thread, but
 * do not rely on that for timely release.
 *
 * <p>Closing a context while another thread is still running an op on it is a programming
 * error (as with every native handle); {@link #close()} itself is idempotent and thread-safe.
 */
public final class CairnContext extends NativeHandle {
  /** For runRaw: take the output count from cairn_op_num_outputs (ops with a variadic output). */
  static final int OUTPUTS_FROM_ATTRS = -1;

  /** A context with all defaults: the CPU device, all cores, seed 0, warnings to stderr. */
  public CairnContext() {
    this(new Options());
  }

  /**
   * A context with these options. Throws {@link CairnException} (e.g. NOT_FOUND for an unknown device).
   *
   * @param options the options (null: every default)
   */
  public CairnContext(Options options) {
    this(options, null);
  }

  /**
   * A context with these options and Vulkan settings (cairn_context_create_vulkan); null
   * {@code vulkan} is {@link #CairnContext(Options)}. Without {@code options.device(...)} the
   * default device is "vulkan" (the first discrete GPU, then integrated, virtual, then a CPU
   * implementation); device "cpu" keeps the CPU as default while the settings apply to "vulkan:N".
   * Throws {@link CairnException}: UNAVAILABLE without a Vulkan driver, INVALID_ARGUMENT for a
   * partial set of external handles.
   *
   * @param options the options (null: every default)
   * @param vulkan the Vulkan settings
   */
  public CairnContext(Options options, VulkanOptions vulkan) {
    super(create(options, vulkan), CairnNative::contextFree);
  }

  // A context handle the C library lends for the duration of a callback (a compiled function's
  // trace): never freed here; close() only marks it unusable.
  private CairnContext(long borrowed) {
    super(borrowed, null);
  }

  static CairnContext borrow(long handle) {
    return new CairnContext(handle);
  }

  // Creates the native context, with cairn_context_create_vulkan when `vk` is set. The log handler
  // stays registered until the runtime calls log_release (objects and checkpoints keep the context
  // alive and may still log); the glue then unregisters it.
  private static long create(Options options, VulkanOptions vk) {
    NativeLibrary.check();
    if (options == null) options = new Options();
    long logId = 0;
    if (options.logHandler != null) {
      LogHandler handler = options.logHandler;
      logId = Callbacks.registerLogFn((level, message) -> handler.log(LogLevel.fromValue(level), message));
    }
    byte[] device = NativeResources.cstr(options.device);
    try {
      int level = options.logLevel == null ? 0 : options.logLevel.value();
      if (vk == null) {
        return CairnNative.contextCreate(options.set, device, options.numThreads, options.seed, logId, level);
      }
      return CairnNative.contextCreateVulkan(options.set, device, options.numThreads, options.seed, logId, level,
          vk.set(), vk.instance(), vk.physicalDevice(), vk.device(), vk.queueFamily(), vk.queue(), vk.memoryLimit(),
          vk.cpuFallback() ? 1 : 0);
    } catch (RuntimeException | Error e) {
      if (logId != 0) Callbacks.unregisterLogFn(logId);
      throw e;
    }
  }

  /**
   * Options for a new context; a field not set keeps the C API's default (cairn_context_options_init).
   *
   * @return new options, each at its default
   */
  public static Options options() {
    return new Options();
  }

  /** The options of cairn_context_options that Java can set. Not thread-safe to mutate. */
  public static final class Options {
    private long set; // CairnNative.CONTEXT_OPTIONS_* of the fields set
    private String device;
    private int numThreads;
    private long seed;
    private LogLevel logLevel;
    private LogHandler logHandler;

    /** Options at their defaults (the same as {@code options()}). */
    public Options() {}

    /**
     * The default device: null or "cpu" (default), "vulkan", "vulkan:N".
     *
     * @param device the device name ("cpu", "vulkan", "vulkan:N"; null: the default device)
     * @return these options
     */
    public Options device(String device) {
      this.device = device;
      set |= CairnNative.CONTEXT_OPTIONS_DEVICE;
      return this;
    }

    /**
     * Intra-op threads including the caller; 0 (default) means all cores.
     *
     * @param numThreads the number of CPU threads (0: the hardware's)
     * @return these options
     */
    public Options numThreads(int numThreads) {
      this.numThreads = numThreads;
      set |= CairnNative.CONTEXT_OPTIONS_NUM_THREADS;
      return this;
    }

    /**
     * The base seed of random ops; default 0.
     *
     * @param seed the base seed
     * @return these options
     */
    public Options seed(long seed) {
      this.seed = seed;
      set |= CairnNative.CONTEXT_OPTIONS_SEED;
      return this;
    }

    /**
     * The least severe level delivered; default WARNING.
     *
     * @param logLevel the least severe level passed to the handler
     * @return these options
     */
    public Options logLevel(LogLevel logLevel) {
      if (logLevel == null) throw new NullPointerException("logLevel");
      this.logLevel = logLevel;
      set |= CairnNative.CONTEXT_OPTIONS_LOG_LEVEL;
      return this;
    }

    /**
     * Receives log messages; null (default) sends warnings and errors to stderr.
     *
     * @param logHandler the handler that receives the log messages (null: warnings and errors go to stderr)
     * @return these options
     */
    public Options logHandler(LogHandler logHandler) {
      this.logHandler = logHandler;
      set |= CairnNative.CONTEXT_OPTIONS_LOG_FN;
      return this;
    }
  }

  /**
   * The name of the default device, e.g. "cpu".
   *
   * @return the name of the default device
   */
  public String device() {
    long h = handle();
    try {
      return CairnNative.contextDevice(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The context's device configuration (tf.config): physical and logical devices, visibility,
   * memory growth, logical device splits, threads and memory counts. Configure right after
   * creating the context, before its first tensor or op.
   *
   * @return a view of this context's device configuration
   */
  public DeviceConfig devices() {
    checkClosed();
    return new DeviceConfig(this);
  }

  /**
   * Runs op {@code op} (a registered name such as "Add") on {@code inputs} with {@code attrs} (null
   * for none) and returns its outputs, which the caller closes; their count comes from the
   * registry ({@link Cairn#numOutputs}). The typed wrappers in {@link Ops} are usually more
   * convenient.
   *
   * @param op the op's registered name, e.g. "MatMul"
   * @param inputs the input tensors
   * @param attrs the attributes (null: none)
   * @return new tensors, which the caller closes
   */
  public Tensor[] run(String op, Tensor[] inputs, OpAttrs attrs) {
    if (op == null) throw new NullPointerException("op");
    return runRaw(NativeResources.cstr(op), inputs, attrs, OUTPUTS_FROM_ATTRS);
  }

  /**
   * Like {@link #run(String, Tensor[], OpAttrs)} with the output count given: the C library
   * refuses a count that is not the op's (INVALID_ARGUMENT).
   *
   * @param op the op's registered name, e.g. "MatMul"
   * @param inputs the input tensors
   * @param attrs the attributes (null: none)
   * @param numOutputs how many tensors each branch or body returns
   * @return new tensors, which the caller closes
   */
  public Tensor[] run(String op, Tensor[] inputs, OpAttrs attrs, int numOutputs) {
    if (op == null) throw new NullPointerException("op");
    if (numOutputs < 0) throw new IllegalArgumentException("numOutputs must be >= 0, got " + numOutputs);
    return runRaw(NativeResources.cstr(op), inputs, attrs, numOutputs);
  }

  Tensor[] runRaw(byte[] op, Tensor[] inputs, OpAttrs attrs, int numOutputs) {
    if (numOutputs == OUTPUTS_FROM_ATTRS) numOutputs = OpAttrs.numOutputs(op, attrs);
    long ctx = handle();
    long[] in = new long[inputs == null ? 0 : inputs.length];
    for (int i = 0; i < in.length; ++i) {
      in[i] = input(inputs[i], i);
    }
    long[] out = new long[numOutputs];
    try {
      if (attrs == null) {
        CairnNative.opRun(ctx, op, in, null, null, null, null, null, null, null, null, out);
      } else {
        attrs.opRun(ctx, op, in, out);
      }
    } finally {
      // The handles above must stay valid until the call returns: keep their owners reachable.
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(inputs);
    }
    Tensor[] result = new Tensor[numOutputs];
    for (int i = 0; i < numOutputs; ++i) result[i] = new Tensor(out[i]);
    return result;
  }

  // The generated wrappers' fast path (an op with one output, 1 to 3 inputs, no attributes): one
  // JNI call on the handles, no array in or out. `op` is an OpNative.name constant.
  Tensor run1(long op, Tensor a) {
    long ctx = handle();
    long out;
    try {
      out = OpNative.run(ctx, op, 1, input(a, 0), 0, 0);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(a);
    }
    return new Tensor(out);
  }

  Tensor run1(long op, Tensor a, Tensor b) {
    long ctx = handle();
    long out;
    try {
      out = OpNative.run(ctx, op, 2, input(a, 0), input(b, 1), 0);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(a);
      Reference.reachabilityFence(b);
    }
    return new Tensor(out);
  }

  Tensor run1(long op, Tensor a, Tensor b, Tensor c) {
    long ctx = handle();
    long out;
    try {
      out = OpNative.run(ctx, op, 3, input(a, 0), input(b, 1), input(c, 2));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(a);
      Reference.reachabilityFence(b);
      Reference.reachabilityFence(c);
    }
    return new Tensor(out);
  }

  private static long input(Tensor t, int i) {
    if (t == null) throw new NullPointerException("input " + i + " is null");
    return t.handle();
  }

  @Override
  public String toString() {
    return isClosed() ? "CairnContext(closed)" : "CairnContext(" + device() + ")";
  }

  // ---- Device placement (docs/placement.md) ----

  /**
   * Opens a device scope on {@code device} ("cpu", "vulkan:0", any name the context resolves) on
   * the calling thread; close it on this thread (try-with-resources).
   *
   * @param device the device name
   * @return the open scope
   * @throws CairnException NOT_FOUND for an unknown device name, UNAVAILABLE for a device whose
   *     backend is missing
   */
  public DeviceScope deviceScope(String device) {
    return new DeviceScope(this, device);
  }

  /**
   * Turns soft placement on or off (default off). On: an op runs on the innermost device scope's
   * device, else on its first input's, and every input on another device is copied there (counted
   * by {@link #autoCopies}). Off: inputs on different devices are INVALID_ARGUMENT; no copy is ever
   * implicit.
   *
   * @param on whether soft placement is on
   */
  public void setSoftPlacement(boolean on) {
    long h = handle();
    try {
      CairnNative.contextSetSoftPlacement(h, on ? 1 : 0);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Whether soft placement is on.
   *
   * @return true when soft placement is on
   */
  public boolean softPlacement() {
    long h = handle();
    try {
      return CairnNative.contextSoftPlacement(h) != 0;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The number of input copies soft placement has made in this context so far, on every thread.
   *
   * @return the number of copies
   */
  public long autoCopies() {
    long h = handle();
    try {
      return CairnNative.contextAutoCopies(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
