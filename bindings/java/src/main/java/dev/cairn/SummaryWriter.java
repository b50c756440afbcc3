package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A TensorBoard summary writer (tf.summary.create_file_writer); cairn_summary_writer. It owns one
 * event file in its log directory; summary calls queue the event and return, and a background
 * thread writes it (on {@link #flush()}, on {@link #close()} and every flush interval). Open the
 * directory with {@code tensorboard --logdir DIR}.
 *
 * <pre>{@code
 * try (SummaryWriter w = SummaryWriter.create("logs/run1")) {
 *   w.scalar("loss", 0.25, 1);
 *   w.histogram(ctx, "weights", weights, 30, 1);
 * }
 * }</pre>
 *
 * <p>The tensor forms ({@link #scalar(CairnContext, String, Tensor, long)}, {@link #histogram},
 * {@link #image}, {@link #audio}) run as ops: called inside a {@link CompiledFunction}'s body they
 * are recorded and write on every call of the function. The static {@code Default} methods write to
 * the process-wide default writer ({@link #setDefault()}); {@link #DEFAULT_STEP} is the
 * process-wide default step ({@link #setStep(long)}). Thread-safe.
 */
public final class SummaryWriter extends NativeHandle {
  /** The {@code step} argument meaning "the process-wide default step" ({@link #setStep}). */
  public static final long DEFAULT_STEP = Long.MIN_VALUE;

  private SummaryWriter(long handle) {
    super(handle, CairnNative::summaryWriterFree);
  }

  /**
   * A writer with the default options for {@code logdir} (created with its parents).
   *
   * @param logdir the log directory
   * @return the writer
   */
  public static SummaryWriter create(String logdir) {
    return create(logdir, null);
  }

  /**
   * A writer for {@code logdir} with a new event file.
   *
   * @param logdir the log directory
   * @param options the options; null for the defaults
   * @return the writer
   * @throws CairnException FAILED_PRECONDITION naming the directory when it cannot be created
   */
  public static SummaryWriter create(String logdir, Options options) {
    Objects.requireNonNull(logdir, "logdir");
    Options o = options == null ? new Options() : options;
    NativeLibrary.check();
    return new SummaryWriter(CairnNative.summaryWriterCreate(
        NativeResources.cstr(logdir), o.set, o.maxQueue, o.flushMillis, NativeResources.cstr(o.filenameSuffix)));
  }

  /**
   * New default options.
   *
   * @return options with every field at its default
   */
  public static Options options() {
    return new Options();
  }

  /** Options of {@link #create(String, Options)} (cairn_summary_writer_options). */
  public static final class Options {
    private long set;
    private long maxQueue = 10;
    private long flushMillis = 1000;
    private String filenameSuffix;

    /** Default options. */
    public Options() {}

    /**
     * Events pending before the writer thread writes them (default 10).
     *
     * @param maxQueue at least 1
     * @return this
     */
    public Options maxQueue(long maxQueue) {
      this.maxQueue = maxQueue;
      set |= CairnNative.SUMMARY_WRITER_OPTIONS_MAX_QUEUE;
      return this;
    }

    /**
     * The flush timer in milliseconds (default 1000; 0: only on flush and close).
     *
     * @param flushMillis the interval
     * @return this
     */
    public Options flushMillis(long flushMillis) {
      this.flushMillis = flushMillis;
      set |= CairnNative.SUMMARY_WRITER_OPTIONS_FLUSH_MILLIS;
      return this;
    }

    /**
     * Appended to the file name (default ".v2").
     *
     * @param suffix the suffix
     * @return this
     */
    public Options filenameSuffix(String suffix) {
      this.filenameSuffix = Objects.requireNonNull(suffix, "suffix");
      set |= CairnNative.SUMMARY_WRITER_OPTIONS_FILENAME_SUFFIX;
      return this;
    }
  }

  /**
   * The path of the event file being written.
   *
   * @return the path
   */
  public String path() {
    long h = handle();
    try {
      return CairnNative.summaryWriterPath(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Writes every queued event and pushes the file to the operating system; returns when done. */
  public void flush() {
    long h = handle();
    try {
      CairnNative.summaryWriterFlush(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Flushes, stops the writer thread, closes the file and frees this handle. Calling it again does
   * nothing; later summary calls on it throw FAILED_PRECONDITION.
   *
   * @throws CairnException a pending error of the background thread (the handle is freed anyway)
   */
  @Override
  public void close() {
    synchronized (this) {
      if (isClosed()) return;
      try {
        CairnNative.summaryWriterClose(handle());
      } finally {
        Reference.reachabilityFence(this);
        super.close();
      }
    }
  }

  /** Makes this the process-wide default writer (tf.summary's {@code writer.as_default()}). */
  public void setDefault() {
    long h = handle();
    try {
      CairnNative.summaryWriterSetDefault(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Clears the process-wide default writer (summaries to the default writer then write nothing). */
  public static void clearDefault() {
    NativeLibrary.check();
    CairnNative.summaryWriterSetDefault(0);
  }

  /**
   * Sets the process-wide default step (tf.summary.experimental.set_step).
   *
   * @param step the step; {@link #DEFAULT_STEP} unsets it
   */
  public static void setStep(long step) {
    NativeLibrary.check();
    CairnNative.summarySetStep(step);
  }

  /**
   * The process-wide default step.
   *
   * @return the step; {@link #DEFAULT_STEP} when unset
   */
  public static long step() {
    NativeLibrary.check();
    return CairnNative.summaryStep();
  }

  // 0 (the default writer) for null.
  private static long handleOf(SummaryWriter w) {
    if (w == null) {
      NativeLibrary.check();
      return 0;
    }
    return w.handle();
  }

  private static byte[] tag(String tag) {
    return NativeResources.cstr(Objects.requireNonNull(tag, "tag"));
  }

  /**
   * tf.summary.scalar from a host value: a float32 scalar. Not recorded inside compiled functions
   * (use the tensor form there).
   *
   * @param tag the tag
   * @param value the value
   * @param step the step, or {@link #DEFAULT_STEP}
   * @throws CairnException INVALID_ARGUMENT with no step; FAILED_PRECONDITION after close
   */
  public void scalar(String tag, double value, long step) {
    scalar(this, tag, value, step);
  }

  /**
   * {@link #scalar(String, double, long)} to the default writer (nothing without one).
   *
   * @param tag the tag
   * @param value the value
   * @param step the step, or {@link #DEFAULT_STEP}
   */
  public static void scalarDefault(String tag, double value, long step) {
    scalar(null, tag, value, step);
  }

  private static void scalar(SummaryWriter w, String tag, double value, long step) {
    byte[] t = tag(tag);
    long h = handleOf(w);
    try {
      CairnNative.summaryScalar(h, t, value, step);
    } finally {
      Reference.reachabilityFence(w);
    }
  }

  /**
   * tf.summary.text: a string for the text plugin.
   *
   * @param tag the tag
   * @param text the text
   * @param step the step, or {@link #DEFAULT_STEP}
   */
  public void text(String tag, String text, long step) {
    byte[] t = tag(tag);
    byte[] s = NativeResources.cstr(Objects.requireNonNull(text, "text"));
    long h = handle();
    try {
      CairnNative.summaryText(h, t, s, step);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * tf.summary.scalar from a rank-0 tensor of a real dtype or bool. Eager: writes now; inside a
   * compiled function: records an op that writes on every call.
   *
   * @param ctx the context
   * @param tag the tag
   * @param value the scalar
   * @param step the step, or {@link #DEFAULT_STEP}
   * @throws CairnException INVALID_ARGUMENT naming the tag for another rank or dtype
   */
  public void scalar(CairnContext ctx, String tag, Tensor value, long step) {
    scalarTensor(this, ctx, tag, value, step);
  }

  /**
   * The tensor form of {@code scalar} to the default writer (resolved when it runs).
   *
   * @param ctx the context
   * @param tag the tag
   * @param value the scalar
   * @param step the step, or {@link #DEFAULT_STEP}
   */
  public static void scalarDefault(CairnContext ctx, String tag, Tensor value, long step) {
    scalarTensor(null, ctx, tag, value, step);
  }

  private static void scalarTensor(SummaryWriter w, CairnContext ctx, String tag, Tensor value, long step) {
    tensorSummary(w, ctx, tag, value, (c, h, t, v) -> CairnNative.summaryScalarTensor(c, h, t, v, step));
  }

  // A native summary call over a context, a writer (0: the default), a tag and a tensor.
  @FunctionalInterface
  private interface TensorSummary {
    void run(long ctx, long writer, byte[] tag, long tensor);
  }

  private static void tensorSummary(SummaryWriter w, CairnContext ctx, String tag, Tensor value, TensorSummary call) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(value, "tensor");
    byte[] t = tag(tag);
    long h = handleOf(w);
    long c = ctx.handle();
    long v = value.handle();
    try {
      call.run(c, h, t, v);
    } finally {
      Reference.reachabilityFence(w);
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(value);
    }
  }

  /**
   * tf.summary.histogram: {@code buckets} equal-width buckets (0 or less: 30) over the values of
   * {@code values} (any real dtype and shape).
   *
   * @param ctx the context
   * @param tag the tag
   * @param values the values
   * @param buckets the bucket count
   * @param step the step, or {@link #DEFAULT_STEP}
   * @throws CairnException INVALID_ARGUMENT naming the tag for a NaN or infinite value
   */
  public void histogram(CairnContext ctx, String tag, Tensor values, long buckets, long step) {
    tensorSummary(this, ctx, tag, values, (c, h, t, v) -> CairnNative.summaryHistogram(c, h, t, v, buckets, step));
  }

  /**
   * tf.summary.image: a [k, height, width, channels] batch (1, 3 or 4 channels; uint8, or float in
   * [0, 1]); the first {@code maxOutputs} images (negative: 3) are written as PNGs.
   *
   * @param ctx the context
   * @param tag the tag
   * @param images the batch
   * @param maxOutputs how many to write
   * @param step the step, or {@link #DEFAULT_STEP}
   */
  public void image(CairnContext ctx, String tag, Tensor images, long maxOutputs, long step) {
    tensorSummary(this, ctx, tag, images, (c, h, t, v) -> CairnNative.summaryImage(c, h, t, v, maxOutputs, step));
  }

  /**
   * tf.summary.audio: a [k, frames, channels] float batch in [-1, 1]; the first {@code maxOutputs}
   * clips (negative: 3) as 16-bit WAV at {@code sampleRate} Hz.
   *
   * @param ctx the context
   * @param tag the tag
   * @param audio the batch
   * @param sampleRate a whole number of Hz
   * @param maxOutputs how many to write
   * @param step the step, or {@link #DEFAULT_STEP}
   */
  public void audio(CairnContext ctx, String tag, Tensor audio, double sampleRate, long maxOutputs, long step) {
    tensorSummary(this, ctx, tag, audio, (c, h, t, v) -> CairnNative.summaryAudio(c, h, t, v, sampleRate, maxOutputs, step));
  }

  /**
   * tf.summary.graph: the graph of trace {@code traceIndex} of {@code fn} as a GraphDef event, which
   * TensorBoard's graph dashboard draws.
   *
   * @param fn the compiled function
   * @param traceIndex the trace (see {@link CompiledFunction#numTraces()})
   * @param step the step, or {@link #DEFAULT_STEP}
   * @throws CairnException OUT_OF_RANGE for an index past the traces
   */
  public void graph(CompiledFunction fn, long traceIndex, long step) {
    long h = handle();
    long f = fn.handle();
    try {
      CairnNative.summaryGraph(h, f, traceIndex, step);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(fn);
    }
  }
}
