package dev.cairn;

import java.lang.ref.Reference;
import java.util.List;
import java.util.Objects;

/**
 * A gradient tape (tf.GradientTape): while open, it records the ops run on watched tensors and on
 * trainable variables read through {@link Variable#read()} or a layer call, and {@link #gradient}
 * then differentiates a recorded result with respect to them. Gradients are built from registered
 * ops, so a tape open around another tape's gradient call records it (higher-order gradients).
 *
 * <p><b>Threads:</b> a tape records only the ops of the thread that created it, and only that
 * thread may call {@link #gradient} (another thread gets a {@link CairnException} with code
 * FAILED_PRECONDITION). Ops other threads run meanwhile, on the same context too, are neither
 * recorded nor disturbed. {@link #close()} may come from any thread.
 *
 * <p>Close a tape as soon as its gradients are taken (try-with-resources): until then it keeps
 * recording, and holds every recorded intermediate tensor. A daemon thread frees a tape
 * collected unclosed.
 */
public final class GradientTape extends NativeHandle {
  private final boolean persistent;

  private GradientTape(long handle, boolean persistent) {
    super(handle, CairnNative::tapeFree);
    this.persistent = persistent;
  }

  /**
   * A non-persistent tape watching trainable variables as they are read.
   *
   * @param ctx the context
   * @return a non-persistent tape watching trainable variables as they are read
   */
  public static GradientTape create(CairnContext ctx) {
    return create(ctx, null);
  }

  /**
   * A tape with these options (null: the defaults). Starts recording on the calling thread.
   *
   * @param ctx the context
   * @param options the options (null: every default)
   * @return a tape with these options (null: the defaults)
   */
  public static GradientTape create(CairnContext ctx, Options options) {
    if (options == null) options = new Options();
    long c = ctx.handle();
    try {
      long h = CairnNative.tapeCreate(c, options.set, options.persistent ? 1 : 0, options.watchAccessedVariables ? 1 : 0);
      return new GradientTape(h, options.persistent);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Options for a new tape; each starts at the C API's default.
   *
   * @return new options, each at its default
   */
  public static Options options() {
    return new Options();
  }

  /** The options of cairn_tape_create. Not thread-safe to mutate. */
  public static final class Options {
    private long set; // CairnNative.TAPE_OPTIONS_* of the fields set
    private boolean persistent;
    private boolean watchAccessedVariables;

    /** Options at their defaults (the same as {@code options()}). */
    public Options() {}

    /**
     * Whether {@link GradientTape#gradient} may be called more than once; default false.
     *
     * @param persistent whether the tape allows more than one gradient call
     * @return these options
     */
    public Options persistent(boolean persistent) {
      this.persistent = persistent;
      set |= CairnNative.TAPE_OPTIONS_PERSISTENT;
      return this;
    }

    /**
     * Whether trainable variables are watched when they are read; default true.
     *
     * @param watch whether to watch every trainable variable the recorded ops read
     * @return these options
     */
    public Options watchAccessedVariables(boolean watch) {
      this.watchAccessedVariables = watch;
      set |= CairnNative.TAPE_OPTIONS_WATCH_ACCESSED_VARIABLES;
      return this;
    }
  }

  /**
   * Whether several gradient calls are allowed.
   *
   * @return whether several gradient calls are allowed
   */
  public boolean persistent() {
    return persistent;
  }

  /**
   * Watches a tensor (a floating dtype, else INVALID_ARGUMENT): ops on it are recorded.
   *
   * @param t the tensor to watch
   */
  public void watch(Tensor t) {
    Objects.requireNonNull(t, "t");
    long h = handle();
    long th = t.handle();
    try {
      CairnNative.tapeWatch(h, th);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(t);
    }
  }

  /**
   * Watches a variable, also a non-trainable one: its reads are recorded.
   *
   * @param v the variable
   */
  public void watch(Variable v) {
    Objects.requireNonNull(v, "v");
    long h = handle();
    long vh = v.handle();
    try {
      CairnNative.tapeWatchVariable(h, vh);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(v);
    }
  }

  /** Pauses recording (tf.GradientTape.stop_recording) until {@link #resumeRecording()}. */
  public void stopRecording() {
    long h = handle();
    try {
      CairnNative.tapeStopRecording(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Resumes recording after {@link #stopRecording()}. */
  public void resumeRecording() {
    long h = handle();
    try {
      CairnNative.tapeResumeRecording(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The gradients of {@code target} (summed when not a scalar) with respect to each source, as new
   * tensors the caller closes; null for a source the target does not depend on.
   *
   * @param target the tensor to differentiate (usually a scalar loss)
   * @param sources the tensors or variables to differentiate with respect to
   * @return new tensors, which the caller closes
   */
  public Tensor[] gradient(Tensor target, Tensor... sources) {
    return gradient(target, sources, null, Unconnected.NONE);
  }

  /**
   * d(sum(target * outputGradient)) / d(source) for each source ({@code outputGradient} null:
   * ones). An unconnected source gets null under {@link Unconnected#NONE} and zeros of its shape
   * under {@link Unconnected#ZERO}. A non-persistent tape allows one call (FAILED_PRECONDITION
   * after); UNIMPLEMENTED names a recorded op without a gradient.
   *
   * @param target the tensor to differentiate (usually a scalar loss)
   * @param sources the tensors or variables to differentiate with respect to
   * @param outputGradient the gradient of the target to start from (null: ones)
   * @param unconnected what a source the target does not depend on gets: null or zeros
   * @return new tensors, which the caller closes
   */
  public Tensor[] gradient(Tensor target, Tensor[] sources, Tensor outputGradient, Unconnected unconnected) {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(sources, "sources");
    Objects.requireNonNull(unconnected, "unconnected");
    long[] handles = new long[sources.length];
    for (int i = 0; i < sources.length; ++i) handles[i] = Objects.requireNonNull(sources[i], "sources[" + i + "]").handle();
    long h = handle();
    long t = target.handle();
    long g = outputGradient == null ? 0 : outputGradient.handle();
    try {
      return wrap(CairnNative.tapeGradient(h, t, handles, g, unconnected.value()));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(target);
      Reference.reachabilityFence(sources);
      Reference.reachabilityFence(outputGradient);
    }
  }

  /**
   * The gradients of {@code target} with respect to each variable (the sum over all its recorded
   * reads), null for a variable the target does not depend on. Same order as {@code variables}.
   *
   * @param target the tensor to differentiate (usually a scalar loss)
   * @param variables the variables, in the order of the gradients
   * @return new tensors, which the caller closes
   */
  public Tensor[] gradient(Tensor target, Variable... variables) {
    return gradient(target, variables, null, Unconnected.NONE);
  }

  /**
   * {@link #gradient(Tensor, Variable...)} over a list, e.g. {@link Layer#trainableWeights()}.
   *
   * @param target the tensor to differentiate (usually a scalar loss)
   * @param variables the variables, in the order of the gradients
   * @return new tensors, which the caller closes
   */
  public Tensor[] gradient(Tensor target, List<? extends Variable> variables) {
    return gradient(target, variables.toArray(new Variable[0]), null, Unconnected.NONE);
  }

  /**
   * Like {@link #gradient(Tensor, Tensor[], Tensor, Unconnected)} for variables.
   *
   * @param target the tensor to differentiate (usually a scalar loss)
   * @param variables the variables, in the order of the gradients
   * @param outputGradient the gradient of the target to start from (null: ones)
   * @param unconnected what a source the target does not depend on gets: null or zeros
   * @return new tensors, which the caller closes
   */
  public Tensor[] gradient(Tensor target, Variable[] variables, Tensor outputGradient, Unconnected unconnected) {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(variables, "variables");
    Objects.requireNonNull(unconnected, "unconnected");
    long[] handles = new long[variables.length];
    for (int i = 0; i < variables.length; ++i) {
      handles[i] = Objects.requireNonNull(variables[i], "variables[" + i + "]").handle();
    }
    long h = handle();
    long t = target.handle();
    long g = outputGradient == null ? 0 : outputGradient.handle();
    try {
      return wrap(CairnNative.tapeGradientVariables(h, t, handles, g, unconnected.value()));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(target);
      Reference.reachabilityFence(variables);
      Reference.reachabilityFence(outputGradient);
    }
  }

  private static Tensor[] wrap(long[] handles) {
    Tensor[] out = new Tensor[handles.length];
    for (int i = 0; i < handles.length; ++i) out[i] = handles[i] == 0 ? null : new Tensor(handles[i]);
    return out;
  }

  @Override
  public String toString() {
    return isClosed() ? "GradientTape(closed)" : "GradientTape(" + (persistent ? "persistent" : "one gradient") + ")";
  }
}
