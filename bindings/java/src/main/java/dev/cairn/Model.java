package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A model (tf.keras.Model): a {@link Sequential} that can be compiled with an optimizer, a loss
 * and metrics, then trained with {@link #fit}, scored with {@link #evaluate} and run with {@link
 * #predict}. Everything a Sequential or a layer does works on it (call, weights, summary,
 * checkpoints: compiling makes the optimizer its edge "optimizer", so a checkpoint of the model
 * saves the optimizer too).
 *
 * <pre>{@code
 * try (Model model = Model.of(ctx, hidden, logits)) {
 *   model.compile(Optimizer.adam(ctx, 0.003), "sparse_categorical_crossentropy", "accuracy");
 *   History h = model.fit(train, Model.fitOptions().epochs(10).callbacks(checkpoints));
 *   double accuracy = model.evaluate(xTest, yTest).get("accuracy");
 * }
 * }</pre>
 *
 * <p>Data: a {@link Dataset} of (x, y) batches, or tensors x and y batched by {@code batchSize}
 * along the first dimension. One fit, evaluate, predict, trainOnBatch or testOnBatch at a time per
 * model (another gets FAILED_PRECONDITION). Errors name the C function, e.g. {@code
 * INVALID_ARGUMENT: cairn_model_fit: ...}.
 */
public final class Model extends Sequential {
  // The model whose fit or evaluate runs on this thread, handed to its callbacks' hooks.
  private static final ThreadLocal<Running> RUNNING = new ThreadLocal<>();

  /** A running model and the C pointer its hooks got last time (known to be the same object). */
  private static final class Running {
    final Model model;
    long lentHandle;

    Running(Model model) {
      this.model = model;
    }
  }

  private Model(long handle) {
    super(handle);
  }

  /**
   * A model named {@code name} (null: "sequential", "sequential_1", ...) holding {@code layers} in
   * order; each layer keeps its own handle, which the caller closes.
   *
   * @param ctx the context
   * @param name the name, or null
   * @param layers the layers, in order
   * @return the model, which the caller closes
   */
  public static Model create(CairnContext ctx, String name, Layer... layers) {
    long[] handles = new long[layers.length];
    long c = ctx.handle();
    try {
      for (int i = 0; i < layers.length; ++i) handles[i] = Objects.requireNonNull(layers[i], "layer").handle();
      return new Model(ModelNative.create(c, NativeResources.cstr(name), handles));
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(layers);
    }
  }

  /**
   * {@code create(ctx, null, layers)}.
   *
   * @param ctx the context
   * @param layers the layers, in order
   * @return the model, which the caller closes
   */
  public static Model of(CairnContext ctx, Layer... layers) {
    return create(ctx, null, layers);
  }

  // ---- compile ----

  /**
   * Compiles with {@code loss} ("sparse_categorical_crossentropy", "binary_crossentropy", "mse",
   * "mae"; crossentropies take logits) and {@code metrics} ("accuracy", "mse", ...). The model
   * keeps its own reference to the optimizer.
   *
   * @param optimizer the optimizer
   * @param loss the loss's name
   * @param metrics the metrics' names
   * @return this model
   */
  public Model compile(Optimizer optimizer, String loss, String... metrics) {
    return compile(compileOptions(optimizer, loss).metrics(metrics));
  }

  /**
   * Compiles with options; compiling again replaces the configuration.
   *
   * @param options the options
   * @return this model
   */
  public Model compile(CompileOptions options) {
    Objects.requireNonNull(options, "options");
    byte[][] metrics = null;
    if (options.metrics != null) {
      metrics = new byte[options.metrics.length][];
      for (int i = 0; i < metrics.length; ++i) metrics[i] = NativeResources.cstr(options.metrics[i]);
    }
    long h = handle();
    long o = options.optimizer.handle();
    try {
      ModelNative.compile(h, o, NativeResources.cstr(options.loss), metrics, options.set, options.fromLogits,
          options.runEagerly);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(options.optimizer);
    }
    return this;
  }

  /**
   * Compile options with the required optimizer and loss; the rest keep the C defaults.
   *
   * @param optimizer the optimizer
   * @param loss the loss's name
   * @return new options
   */
  public static CompileOptions compileOptions(Optimizer optimizer, String loss) {
    return new CompileOptions(optimizer, loss);
  }

  /** Options of {@link #compile(CompileOptions)}. */
  public static final class CompileOptions {
    private final Optimizer optimizer;
    private final String loss;
    private String[] metrics;
    private long set;
    private boolean fromLogits;
    private boolean runEagerly;

    CompileOptions(Optimizer optimizer, String loss) {
      this.optimizer = Objects.requireNonNull(optimizer, "optimizer");
      this.loss = loss;
    }

    /**
     * The metrics' names (default none).
     *
     * @param metrics the names
     * @return these options
     */
    public CompileOptions metrics(String... metrics) {
      this.metrics = metrics.clone();
      return this;
    }

    /**
     * Whether the crossentropy losses take logits (default true).
     *
     * @param fromLogits whether predictions are logits
     * @return these options
     */
    public CompileOptions fromLogits(boolean fromLogits) {
      this.fromLogits = fromLogits;
      set |= 1;
      return this;
    }

    /**
     * Runs the training step eagerly instead of as a compiled function (default false; same bits).
     *
     * @param runEagerly whether to run eagerly
     * @return these options
     */
    public CompileOptions runEagerly(boolean runEagerly) {
      this.runEagerly = runEagerly;
      set |= 2;
      return this;
    }
  }

  // ---- fit ----

  /**
   * Options of fit at the C defaults (1 epoch, batches of 32, shuffled, a progress bar or epoch lines).
   *
   * @return new options
   */
  public static FitOptions fitOptions() {
    return new FitOptions();
  }

  /**
   * Trains on {@code data}, a dataset of (x, y) batches (keras Model.fit). Builds the model on the
   * first batch if needed. On an error the weights keep the updates of the steps that ran.
   *
   * @param data the training data
   * @param options the options
   * @return the history
   */
  public History fit(Dataset data, FitOptions options) {
    Objects.requireNonNull(data, "data");
    return fit(data, null, null, options);
  }

  /**
   * Trains on tensors: inputs {@code x} and targets {@code y}, batched along the first dimension
   * and, by default, shuffled each epoch.
   *
   * @param x the inputs
   * @param y the targets
   * @param options the options
   * @return the history
   */
  public History fit(Tensor x, Tensor y, FitOptions options) {
    Objects.requireNonNull(x, "x");
    Objects.requireNonNull(y, "y");
    return fit(null, x, y, options);
  }

  private History fit(Dataset ds, Tensor x, Tensor y, FitOptions options) {
    FitOptions o = options == null ? new FitOptions() : options;
    try {
      long[] data = {handleOf(ds), handleOf(x), handleOf(y)};
      long[] val = o.hasValidation ? new long[] {handleOf(o.valDataset), handleOf(o.valX), handleOf(o.valY)} : null;
      long[] ints = {o.epochs, o.batchSize, o.initialEpoch, o.stepsPerEpoch, o.seed, o.validationBatchSize,
          o.validationFreq};
      long h = handle();
      return History.take(running(o.callbacks,
          cbs -> ModelNative.fit(h, data, val, o.set, ints, o.shuffle, o.verbose.value(), cbs)));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(ds);
      Reference.reachabilityFence(x);
      Reference.reachabilityFence(y);
      Reference.reachabilityFence(o);
    }
  }

  /** Options of {@link #fit}; unset fields keep the C defaults. */
  public static final class FitOptions {
    private long set;
    private long epochs;
    private long batchSize;
    private long initialEpoch;
    private long stepsPerEpoch;
    private boolean shuffle;
    private long seed;
    private boolean hasValidation;
    private Dataset valDataset;
    private Tensor valX;
    private Tensor valY;
    private long validationBatchSize;
    private long validationFreq;
    private Verbose verbose = Verbose.AUTO;
    private List<Callback> callbacks = List.of();

    FitOptions() {}

    /**
     * The number of epochs (default 1); with {@link #initialEpoch}, the epoch to end before.
     *
     * @param epochs the epochs
     * @return these options
     */
    public FitOptions epochs(long epochs) {
      this.epochs = epochs;
      set |= 1;
      return this;
    }

    /**
     * Samples per batch, for tensors (default 32; a dataset is batched already).
     *
     * @param batchSize the batch size
     * @return these options
     */
    public FitOptions batchSize(long batchSize) {
      this.batchSize = batchSize;
      set |= 2;
      return this;
    }

    /**
     * The epoch to start at, for resuming (default 0).
     *
     * @param epoch the first epoch
     * @return these options
     */
    public FitOptions initialEpoch(long epoch) {
      this.initialEpoch = epoch;
      set |= 4;
      return this;
    }

    /**
     * N batches an epoch from one iterator that runs on across epochs (a repeated dataset); default
     * 0: each epoch is one pass over the data.
     *
     * @param steps the batches per epoch
     * @return these options
     */
    public FitOptions stepsPerEpoch(long steps) {
      this.stepsPerEpoch = steps;
      set |= 8;
      return this;
    }

    /**
     * Whether tensors are reshuffled each epoch (default true).
     *
     * @param shuffle whether to shuffle
     * @return these options
     */
    public FitOptions shuffle(boolean shuffle) {
      this.shuffle = shuffle;
      set |= 128;
      return this;
    }

    /**
     * The shuffle's seed (default 0).
     *
     * @param seed the seed
     * @return these options
     */
    public FitOptions seed(long seed) {
      this.seed = seed;
      set |= 16;
      return this;
    }

    /**
     * Validates on a dataset of (x, y) batches after every {@link #validationFreq} epochs.
     *
     * @param data the validation data
     * @return these options
     */
    public FitOptions validationData(Dataset data) {
      hasValidation = true;
      valDataset = Objects.requireNonNull(data, "data");
      valX = null;
      valY = null;
      return this;
    }

    /**
     * Validates on tensors x and y after every {@link #validationFreq} epochs.
     *
     * @param x the inputs
     * @param y the targets
     * @return these options
     */
    public FitOptions validationData(Tensor x, Tensor y) {
      hasValidation = true;
      valDataset = null;
      valX = Objects.requireNonNull(x, "x");
      valY = Objects.requireNonNull(y, "y");
      return this;
    }

    /**
     * The validation's batch size, for tensors (default: batchSize).
     *
     * @param batchSize the batch size
     * @return these options
     */
    public FitOptions validationBatchSize(long batchSize) {
      this.validationBatchSize = batchSize;
      set |= 32;
      return this;
    }

    /**
     * Validates after every N-th epoch (default 1).
     *
     * @param freq the epochs between validations
     * @return these options
     */
    public FitOptions validationFreq(long freq) {
      this.validationFreq = freq;
      set |= 64;
      return this;
    }

    /**
     * How fit reports progress (default AUTO: a bar on a terminal, else one line per epoch).
     *
     * @param verbose the mode
     * @return these options
     */
    public FitOptions verbose(Verbose verbose) {
      this.verbose = Objects.requireNonNull(verbose, "verbose");
      set |= 256;
      return this;
    }

    /**
     * The callbacks, called in order: built-in ones and Java ones.
     *
     * @param callbacks the callbacks
     * @return these options
     */
    public FitOptions callbacks(Callback... callbacks) {
      return callbacks(Arrays.asList(callbacks));
    }

    /**
     * The callbacks, called in order.
     *
     * @param callbacks the callbacks
     * @return these options
     */
    public FitOptions callbacks(List<? extends Callback> callbacks) {
      for (Callback c : callbacks) Objects.requireNonNull(c, "callback");
      this.callbacks = List.copyOf(callbacks);
      return this;
    }
  }

  // ---- evaluate ----

  /**
   * Options of evaluate at the C defaults.
   *
   * @return new options
   */
  public static EvaluateOptions evaluateOptions() {
    return new EvaluateOptions();
  }

  /** Options of {@link #evaluate}; unset fields keep the C defaults. */
  public static final class EvaluateOptions {
    private long set;
    private long batchSize;
    private long steps;
    private List<Callback> callbacks = List.of();

    EvaluateOptions() {}

    /**
     * Samples per batch, for tensors (default 32).
     *
     * @param batchSize the batch size
     * @return these options
     */
    public EvaluateOptions batchSize(long batchSize) {
      this.batchSize = batchSize;
      set |= 1;
      return this;
    }

    /**
     * The number of batches (default 0: until the data ends).
     *
     * @param steps the batches
     * @return these options
     */
    public EvaluateOptions steps(long steps) {
      this.steps = steps;
      set |= 2;
      return this;
    }

    /**
     * Callbacks whose onTestEnd runs.
     *
     * @param callbacks the callbacks
     * @return these options
     */
    public EvaluateOptions callbacks(Callback... callbacks) {
      for (Callback c : callbacks) Objects.requireNonNull(c, "callback");
      this.callbacks = List.of(callbacks);
      return this;
    }
  }

  /**
   * The loss and metrics over a dataset of (x, y) batches (keras Model.evaluate).
   *
   * @param data the data
   * @return the logs ("loss", then the metrics)
   */
  public Logs evaluate(Dataset data) {
    return evaluate(data, null);
  }

  /**
   * {@link #evaluate(Dataset)} with options.
   *
   * @param data the data
   * @param options the options
   * @return the logs
   */
  public Logs evaluate(Dataset data, EvaluateOptions options) {
    Objects.requireNonNull(data, "data");
    return evaluate(data, null, null, options);
  }

  /**
   * The loss and metrics over tensors x and y, in batches of 32.
   *
   * @param x the inputs
   * @param y the targets
   * @return the logs
   */
  public Logs evaluate(Tensor x, Tensor y) {
    return evaluate(x, y, null);
  }

  /**
   * {@link #evaluate(Tensor, Tensor)} with options.
   *
   * @param x the inputs
   * @param y the targets
   * @param options the options
   * @return the logs
   */
  public Logs evaluate(Tensor x, Tensor y, EvaluateOptions options) {
    Objects.requireNonNull(x, "x");
    Objects.requireNonNull(y, "y");
    return evaluate(null, x, y, options);
  }

  private Logs evaluate(Dataset ds, Tensor x, Tensor y, EvaluateOptions options) {
    EvaluateOptions o = options == null ? new EvaluateOptions() : options;
    try {
      long h = handle();
      long[] data = {handleOf(ds), handleOf(x), handleOf(y)};
      return Logs.take(running(o.callbacks,
          cbs -> ModelNative.evaluate(h, data[0], data[1], data[2], o.set, o.batchSize, o.steps, cbs)));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(ds);
      Reference.reachabilityFence(x);
      Reference.reachabilityFence(y);
    }
  }

  /** A native call that may run {@code callbacks}: this model is the one their hooks get. */
  private long running(List<Callback> callbacks, java.util.function.ToLongFunction<long[]> call) {
    Callbacks cbs = new Callbacks(callbacks);
    Running previous = RUNNING.get();
    RUNNING.set(new Running(this));
    try {
      return call.applyAsLong(cbs.handles());
    } catch (CairnException e) {
      throw cbs.withCause(e);
    } finally {
      RUNNING.set(previous);
      cbs.close();
    }
  }

  // ---- predict ----

  /**
   * The model's outputs for every batch of a dataset (its first component), concatenated (keras
   * Model.predict). Needs no compile.
   *
   * @param data the data
   * @return a new tensor, which the caller closes (or its {@link TensorScope})
   */
  public Tensor predict(Dataset data) {
    Objects.requireNonNull(data, "data");
    return predict(data, null, 0, 0, 0);
  }

  /**
   * The model's outputs for {@code x}, in batches of 32, concatenated.
   *
   * @param x the inputs
   * @return a new tensor, which the caller closes (or its {@link TensorScope})
   */
  public Tensor predict(Tensor x) {
    Objects.requireNonNull(x, "x");
    return predict(null, x, 0, 0, 0);
  }

  /**
   * The model's outputs for {@code x}, in batches of {@code batchSize}.
   *
   * @param x the inputs
   * @param batchSize the batch size
   * @return a new tensor, which the caller closes (or its {@link TensorScope})
   */
  public Tensor predict(Tensor x, long batchSize) {
    Objects.requireNonNull(x, "x");
    return predict(null, x, CairnNative.PREDICT_OPTIONS_BATCH_SIZE, batchSize, 0);
  }

  private Tensor predict(Dataset ds, Tensor x, long optsSet, long batchSize, long steps) {
    long dataSet = ds != null ? CairnNative.MODEL_DATA_DATASET : CairnNative.MODEL_DATA_X;
    try {
      return new Tensor(CairnNative.modelPredict(handle(), dataSet, handleOf(ds), handleOf(x), 0, optsSet, batchSize,
          steps));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(ds);
      Reference.reachabilityFence(x);
    }
  }

  // ---- single batches ----

  /**
   * One training step on one batch.
   *
   * @param x the inputs
   * @param y the targets
   * @return that batch's loss and metrics
   */
  public Logs trainOnBatch(Tensor x, Tensor y) {
    try {
      return Logs.take(CairnNative.modelTrainOnBatch(handle(), x.handle(), y.handle()));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(x);
      Reference.reachabilityFence(y);
    }
  }

  /**
   * The loss and metrics of one batch, without training.
   *
   * @param x the inputs
   * @param y the targets
   * @return that batch's loss and metrics
   */
  public Logs testOnBatch(Tensor x, Tensor y) {
    try {
      return Logs.take(CairnNative.modelTestOnBatch(handle(), x.handle(), y.handle()));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(x);
      Reference.reachabilityFence(y);
    }
  }

  /** Asks a running fit to stop after the current batch (keras model.stop_training = True); for callbacks. */
  public void stopTraining() {
    try {
      CairnNative.modelStopTraining(handle());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  // ---- saving ----

  /**
   * Saves the whole model into {@code dir} (keras model.save): model.json (the layers' configs and
   * the compile configuration), weights.ckpt (a checkpoint of {"model": model}: weights, optimizer,
   * slots) and serving.cairnfn (the forward pass at the built input shape with any batch size, for
   * {@link CompiledFunction#load} without the code that built the model). The new save is swapped
   * in whole, so a failed save leaves an earlier one as it was.
   *
   * @param dir the directory
   * @throws CairnException FAILED_PRECONDITION for a model never called (its input shape is
   *     unknown); UNIMPLEMENTED for an optimizer with a learning-rate schedule; I/O errors naming
   *     the path
   */
  public void save(String dir) {
    byte[] d = NativeResources.cstr(Objects.requireNonNull(dir, "dir"));
    try {
      CairnNative.modelSave(handle(), d);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Loads a model {@link #save} wrote (keras.models.load_model): built, compiled as it was, with its
   * weights and the optimizer's step and slots, ready to predict or train on.
   *
   * @param ctx the context
   * @param dir the directory
   * @return the model, which the caller closes
   * @throws CairnException NOT_FOUND for a directory without a saved model; INVALID_ARGUMENT naming
   *     the file and the field of a config it cannot read; the checkpoint's errors for damaged weights
   */
  public static Model load(CairnContext ctx, String dir) {
    byte[] d = NativeResources.cstr(Objects.requireNonNull(dir, "dir"));
    long c = ctx.handle();
    try {
      return new Model(CairnNative.modelLoad(c, d));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  // ---- internals ----

  private static long handleOf(NativeHandle h) {
    return h == null ? 0 : h.handle();
  }

  /** The model a hook gets: the running Model, or a new handle on a model lent by C, closed after. */
  static Lent lent(long handle) {
    Running running = RUNNING.get();
    if (running != null && running.lentHandle == handle) return new Lent(running.model, false);
    Model lent = new Model(CairnNative.objectShare(handle));
    if (running != null && !running.model.isClosed() && running.model.sameObject(lent)) {
      lent.close();
      running.lentHandle = handle;
      return new Lent(running.model, false);
    }
    return new Lent(lent, true);
  }

  /** A model lent to a hook. */
  record Lent(Model model, boolean owned) implements AutoCloseable {
    @Override
    public void close() {
      if (owned) model.close();
    }
  }

  /** The cairn_callbacks of one call: built-in handles as they are, Java callbacks wrapped for the call. */
  private static final class Callbacks implements AutoCloseable {
    private final List<Callback> callbacks;
    private final List<CallbackAdapter> adapters = new ArrayList<>();
    private final List<Long> created = new ArrayList<>();

    Callbacks(List<Callback> callbacks) {
      this.callbacks = callbacks;
    }

    long[] handles() {
      long[] out = new long[callbacks.size()];
      for (int i = 0; i < out.length; ++i) {
        Callback c = callbacks.get(i);
        if (c instanceof BuiltinCallback) {
          out[i] = ((BuiltinCallback) c).handle();
        } else {
          CallbackAdapter a = new CallbackAdapter(c);
          out[i] = CallbackAdapter.create(a);
          adapters.add(a);
          created.add(out[i]);
        }
      }
      return out;
    }

    /** {@code e} with the exception a Java hook or schedule threw as its cause (if one did). */
    CairnException withCause(CairnException e) {
      Throwable cause = null;
      for (CallbackAdapter a : adapters) {
        Throwable t = a.takeError();
        if (cause == null) cause = t;
      }
      for (Callback c : callbacks) {
        if (c instanceof BuiltinCallback) {
          Throwable t = ((BuiltinCallback) c).takeHostError();
          if (cause == null) cause = t;
        }
      }
      if (cause == null || e.getCause() != null) return e;
      return new CairnException(e.code(), e.detail(), cause);
    }

    @Override
    public void close() {
      for (long h : created) CairnNative.callbackFree(h);
      created.clear();
      for (Callback c : callbacks) Reference.reachabilityFence(c);
    }
  }
}
