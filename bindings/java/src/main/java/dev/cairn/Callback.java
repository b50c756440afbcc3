package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A callback of {@link Model#fit} and {@link Model#evaluate} (tf.keras.callbacks.Callback).
 * Implement the hooks you need; the others do nothing (and the C library never calls them). Each
 * hook gets the model and, where Keras passes logs, a copy of them; it runs on the thread that
 * called fit. An exception a hook throws, checked or not, ends the fit: fit throws a {@link
 * CairnException} (the exception's code when it is a CairnException, else UNKNOWN) whose message
 * holds the exception's and whose cause is the exception itself. Call {@link Model#stopTraining()}
 * to end the fit after the current batch. Epochs and batches count from 0.
 *
 * <p>The built-in callbacks come from the static methods ({@link #modelCheckpoint}, {@link
 * #tensorBoard}, {@link #earlyStopping}, {@link #learningRateScheduler}, {@link
 * #reduceLrOnPlateau}, {@link #csvLogger}, {@link #backupAndRestore}) as {@link BuiltinCallback}s,
 * which the caller closes.
 */
public interface Callback {
  /**
   * Called when fit starts.
   *
   * @param model the model being trained
   * @throws Exception to end the fit with an error
   */
  default void onTrainBegin(Model model) throws Exception {}

  /**
   * Called when fit ends (normally or stopped).
   *
   * @param model the model
   * @param logs the last epoch's logs
   * @throws Exception to end the fit with an error
   */
  default void onTrainEnd(Model model, Logs logs) throws Exception {}

  /**
   * Called at the start of each epoch.
   *
   * @param model the model
   * @param epoch the epoch, from 0
   * @throws Exception to end the fit with an error
   */
  default void onEpochBegin(Model model, long epoch) throws Exception {}

  /**
   * Called at the end of each epoch, with its training (and validation) values.
   *
   * @param model the model
   * @param epoch the epoch, from 0
   * @param logs the epoch's values
   * @throws Exception to end the fit with an error
   */
  default void onEpochEnd(Model model, long epoch, Logs logs) throws Exception {}

  /**
   * Called before each training batch.
   *
   * @param model the model
   * @param batch the batch within the epoch, from 0
   * @throws Exception to end the fit with an error
   */
  default void onTrainBatchBegin(Model model, long batch) throws Exception {}

  /**
   * Called after each training batch, with the epoch's means so far.
   *
   * @param model the model
   * @param batch the batch within the epoch, from 0
   * @param logs the means so far in the epoch
   * @throws Exception to end the fit with an error
   */
  default void onTrainBatchEnd(Model model, long batch, Logs logs) throws Exception {}

  /**
   * Called at the end of evaluate (and of fit's validation).
   *
   * @param model the model
   * @param logs the evaluation's values
   * @throws Exception to end the fit or evaluate with an error
   */
  default void onTestEnd(Model model, Logs logs) throws Exception {}

  /** A learning rate by epoch, for {@link #learningRateScheduler}. */
  @FunctionalInterface
  interface LearningRateSchedule {
    /**
     * The learning rate for {@code epoch}.
     *
     * @param epoch the epoch, from 0
     * @param lr the current learning rate
     * @return the rate to use (finite, not negative)
     * @throws Exception to end the fit with an error
     */
    double rate(long epoch, double lr) throws Exception;
  }

  // ---- built-in callbacks ----

  /**
   * ModelCheckpoint saving into {@code directory} through a checkpoint manager (files "ckpt-N", N
   * the epoch from 1), 5 kept. Restore with a {@link Checkpoint} of {"model": a fresh model}.
   *
   * @param ctx the context
   * @param directory the checkpoint directory
   * @return the callback, which the caller closes
   */
  static BuiltinCallback modelCheckpoint(CairnContext ctx, String directory) {
    return modelCheckpoint(ctx, new ModelCheckpointOptions(directory));
  }

  /**
   * ModelCheckpoint with options.
   *
   * @param ctx the context
   * @param options the options
   * @return the callback, which the caller closes
   */
  static BuiltinCallback modelCheckpoint(CairnContext ctx, ModelCheckpointOptions options) {
    Objects.requireNonNull(options, "options");
    long c = ctx.handle();
    try {
      return new BuiltinCallback(CairnNative.callbackModelCheckpoint(c, options.set,
          NativeResources.cstr(options.directory), options.maxToKeep, NativeResources.cstr(options.monitor),
          options.mode.value(), options.saveBestOnly ? 1 : 0, options.saveFreq), "ModelCheckpoint");
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * TensorBoard writing event files under {@code logdir}/train and {@code logdir}/validation.
   *
   * @param logdir the log directory
   * @return the callback, which the caller closes
   */
  static BuiltinCallback tensorBoard(String logdir) {
    return tensorBoard(new TensorBoardOptions(logdir));
  }

  /**
   * TensorBoard with options.
   *
   * @param options the options
   * @return the callback, which the caller closes
   */
  static BuiltinCallback tensorBoard(TensorBoardOptions options) {
    Objects.requireNonNull(options, "options");
    return new BuiltinCallback(CairnNative.callbackTensorboard(options.set, NativeResources.cstr(options.logdir),
        options.updateFreq, options.histogramFreq, options.writeGraph ? 1 : 0, options.profileBatchBegin,
        options.profileBatchEnd), "TensorBoard");
  }

  /**
   * EarlyStopping.
   *
   * @param options the options
   * @return the callback, which the caller closes
   */
  static BuiltinCallback earlyStopping(EarlyStoppingOptions options) {
    Objects.requireNonNull(options, "options");
    return new BuiltinCallback(CairnNative.callbackEarlyStopping(options.set, NativeResources.cstr(options.monitor),
        options.minDelta, options.patience, options.mode.value(), options.hasBaseline ? 1 : 0, options.baseline,
        options.restoreBestWeights ? 1 : 0, options.startFromEpoch), "EarlyStopping");
  }

  /**
   * LearningRateScheduler: at each epoch's start, sets the optimizer's learning rate to {@code
   * schedule.rate(epoch, current rate)}. An exception the schedule throws ends the fit as a hook's
   * would.
   *
   * @param schedule the schedule, e.g. {@code (epoch, lr) -> epoch < 5 ? lr : lr * 0.9}
   * @return the callback, which the caller closes
   */
  static BuiltinCallback learningRateScheduler(LearningRateSchedule schedule) {
    Objects.requireNonNull(schedule, "schedule");
    CallbackAdapter.Schedule s = new CallbackAdapter.Schedule(schedule);
    return new BuiltinCallback(ModelNative.learningRateScheduler(s), "LearningRateScheduler", s);
  }

  /**
   * ReduceLROnPlateau.
   *
   * @param options the options
   * @return the callback, which the caller closes
   */
  static BuiltinCallback reduceLrOnPlateau(ReduceLrOptions options) {
    Objects.requireNonNull(options, "options");
    return new BuiltinCallback(CairnNative.callbackReduceLrOnPlateau(options.set,
        NativeResources.cstr(options.monitor), options.factor, options.patience, options.mode.value(),
        options.minDelta, options.cooldown, options.minLr), "ReduceLROnPlateau");
  }

  /**
   * CSVLogger: a header "epoch,loss,..." and one row per epoch in {@code path} (a new file).
   *
   * @param path the file
   * @return the callback, which the caller closes
   */
  static BuiltinCallback csvLogger(String path) {
    return csvLogger(new CsvLoggerOptions(path));
  }

  /**
   * CSVLogger with options.
   *
   * @param options the options
   * @return the callback, which the caller closes
   */
  static BuiltinCallback csvLogger(CsvLoggerOptions options) {
    Objects.requireNonNull(options, "options");
    return new BuiltinCallback(ModelNative.csvLogger(NativeResources.cstr(options.path), options.set,
        (byte) options.separator, options.append), "CSVLogger");
  }

  /**
   * BackupAndRestore into {@code directory}, at each epoch's end.
   *
   * @param ctx the context
   * @param directory the backup directory
   * @return the callback, which the caller closes
   */
  static BuiltinCallback backupAndRestore(CairnContext ctx, String directory) {
    return backupAndRestore(ctx, new BackupOptions(directory));
  }

  /**
   * BackupAndRestore: fault-tolerant training. A fit that finds a backup (the process was killed,
   * or a fit failed) continues from the batch after it, and ends with the weights of an
   * uninterrupted run, bit for bit.
   *
   * @param ctx the context
   * @param options the options
   * @return the callback, which the caller closes
   */
  static BuiltinCallback backupAndRestore(CairnContext ctx, BackupOptions options) {
    Objects.requireNonNull(options, "options");
    long c = ctx.handle();
    try {
      return new BuiltinCallback(CairnNative.callbackBackupAndRestore(c, options.set,
          NativeResources.cstr(options.directory), options.saveFreq, options.deleteCheckpoint ? 1 : 0),
          "BackupAndRestore");
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /** Options of {@link #modelCheckpoint}; unset fields keep the C defaults. */
  final class ModelCheckpointOptions {
    private long set = CairnNative.MODEL_CHECKPOINT_OPTIONS_DIRECTORY;
    private final String directory;
    private long maxToKeep;
    private String monitor;
    private MonitorMode mode = MonitorMode.AUTO;
    private boolean saveBestOnly;
    private long saveFreq;

    /**
     * Options saving into {@code directory}.
     *
     * @param directory the checkpoint manager's directory
     */
    public ModelCheckpointOptions(String directory) {
      this.directory = directory;
    }

    /**
     * How many checkpoints to keep (default 5; below 0 keeps all; 0 is an error).
     *
     * @param n how many to keep
     * @return these options
     */
    public ModelCheckpointOptions maxToKeep(long n) {
      maxToKeep = n;
      set |= CairnNative.MODEL_CHECKPOINT_OPTIONS_MAX_TO_KEEP;
      return this;
    }

    /**
     * The value save_best_only watches (default "val_loss").
     *
     * @param monitor the log name
     * @return these options
     */
    public ModelCheckpointOptions monitor(String monitor) {
      this.monitor = monitor;
      set |= CairnNative.MODEL_CHECKPOINT_OPTIONS_MONITOR;
      return this;
    }

    /**
     * Which way the monitored value improves (default AUTO).
     *
     * @param mode the mode
     * @return these options
     */
    public ModelCheckpointOptions mode(MonitorMode mode) {
      this.mode = Objects.requireNonNull(mode, "mode");
      set |= CairnNative.MODEL_CHECKPOINT_OPTIONS_MODE;
      return this;
    }

    /**
     * Saves only when the monitored value improves (default false).
     *
     * @param saveBestOnly whether to save only improvements
     * @return these options
     */
    public ModelCheckpointOptions saveBestOnly(boolean saveBestOnly) {
      this.saveBestOnly = saveBestOnly;
      set |= CairnNative.MODEL_CHECKPOINT_OPTIONS_SAVE_BEST_ONLY;
      return this;
    }

    /**
     * Saves every {@code n} batches instead of at each epoch's end (default 0: epochs).
     *
     * @param n the batches between saves
     * @return these options
     */
    public ModelCheckpointOptions saveFreq(long n) {
      saveFreq = n;
      set |= CairnNative.MODEL_CHECKPOINT_OPTIONS_SAVE_FREQ;
      return this;
    }
  }

  /** Options of {@link #tensorBoard}; unset fields keep the C defaults. */
  final class TensorBoardOptions {
    private long set = CairnNative.TENSORBOARD_OPTIONS_LOGDIR;
    private final String logdir;
    private long updateFreq;
    private long histogramFreq;
    private boolean writeGraph;
    private long profileBatchBegin;
    private long profileBatchEnd;

    /**
     * Options writing under {@code logdir}.
     *
     * @param logdir the log directory
     */
    public TensorBoardOptions(String logdir) {
      this.logdir = logdir;
    }

    /**
     * Also writes "batch_..." values every {@code n} batches (default 0: per epoch only).
     *
     * @param n the batches between writes
     * @return these options
     */
    public TensorBoardOptions updateFreq(long n) {
      updateFreq = n;
      set |= CairnNative.TENSORBOARD_OPTIONS_UPDATE_FREQ;
      return this;
    }

    /**
     * A histogram of every weight every {@code n} epochs (default 0: none).
     *
     * @param n the epochs between histograms
     * @return these options
     */
    public TensorBoardOptions histogramFreq(long n) {
      histogramFreq = n;
      set |= CairnNative.TENSORBOARD_OPTIONS_HISTOGRAM_FREQ;
      return this;
    }

    /**
     * Whether to write the training step's graph (default true).
     *
     * @param writeGraph whether to write the graph
     * @return these options
     */
    public TensorBoardOptions writeGraph(boolean writeGraph) {
      this.writeGraph = writeGraph;
      set |= CairnNative.TENSORBOARD_OPTIONS_WRITE_GRAPH;
      return this;
    }

    /**
     * Profiles batches {@code begin} to {@code end} of the first epoch (default: none).
     *
     * @param begin the first batch profiled
     * @param end the last batch profiled
     * @return these options
     */
    public TensorBoardOptions profileBatches(long begin, long end) {
      profileBatchBegin = begin;
      profileBatchEnd = end;
      set |= CairnNative.TENSORBOARD_OPTIONS_PROFILE_BATCH_BEGIN | CairnNative.TENSORBOARD_OPTIONS_PROFILE_BATCH_END;
      return this;
    }
  }

  /** Options of {@link #earlyStopping}; unset fields keep the C defaults. */
  final class EarlyStoppingOptions {
    private long set;
    private String monitor;
    private double minDelta;
    private long patience;
    private MonitorMode mode = MonitorMode.AUTO;
    private boolean hasBaseline;
    private double baseline;
    private boolean restoreBestWeights;
    private long startFromEpoch;

    /** Options at the C defaults (monitor "val_loss", patience 0). */
    public EarlyStoppingOptions() {}

    /**
     * The value watched (default "val_loss").
     *
     * @param monitor the log name
     * @return these options
     */
    public EarlyStoppingOptions monitor(String monitor) {
      this.monitor = monitor;
      set |= CairnNative.EARLY_STOPPING_OPTIONS_MONITOR;
      return this;
    }

    /**
     * A smaller change is no improvement (default 0).
     *
     * @param minDelta the smallest improvement
     * @return these options
     */
    public EarlyStoppingOptions minDelta(double minDelta) {
      this.minDelta = minDelta;
      set |= CairnNative.EARLY_STOPPING_OPTIONS_MIN_DELTA;
      return this;
    }

    /**
     * Epochs without improvement before stopping (default 0).
     *
     * @param patience the epochs
     * @return these options
     */
    public EarlyStoppingOptions patience(long patience) {
      this.patience = patience;
      set |= CairnNative.EARLY_STOPPING_OPTIONS_PATIENCE;
      return this;
    }

    /**
     * Which way the value improves (default AUTO).
     *
     * @param mode the mode
     * @return these options
     */
    public EarlyStoppingOptions mode(MonitorMode mode) {
      this.mode = Objects.requireNonNull(mode, "mode");
      set |= CairnNative.EARLY_STOPPING_OPTIONS_MODE;
      return this;
    }

    /**
     * Waiting restarts only past {@code baseline} (default: no baseline).
     *
     * @param baseline the baseline
     * @return these options
     */
    public EarlyStoppingOptions baseline(double baseline) {
      this.baseline = baseline;
      hasBaseline = true;
      set |= CairnNative.EARLY_STOPPING_OPTIONS_BASELINE | CairnNative.EARLY_STOPPING_OPTIONS_HAS_BASELINE;
      return this;
    }

    /**
     * On stopping, the best epoch's weights come back (default false).
     *
     * @param restore whether to restore the best weights
     * @return these options
     */
    public EarlyStoppingOptions restoreBestWeights(boolean restore) {
      restoreBestWeights = restore;
      set |= CairnNative.EARLY_STOPPING_OPTIONS_RESTORE_BEST_WEIGHTS;
      return this;
    }

    /**
     * Epochs before this one are not watched (default 0).
     *
     * @param epoch the first epoch watched
     * @return these options
     */
    public EarlyStoppingOptions startFromEpoch(long epoch) {
      startFromEpoch = epoch;
      set |= CairnNative.EARLY_STOPPING_OPTIONS_START_FROM_EPOCH;
      return this;
    }
  }

  /** Options of {@link #reduceLrOnPlateau}; unset fields keep the C defaults. */
  final class ReduceLrOptions {
    private long set;
    private String monitor;
    private double factor;
    private long patience;
    private MonitorMode mode = MonitorMode.AUTO;
    private double minDelta;
    private long cooldown;
    private double minLr;

    /** Options at the C defaults (monitor "val_loss", factor 0.1, patience 10). */
    public ReduceLrOptions() {}

    /**
     * The value watched (default "val_loss").
     *
     * @param monitor the log name
     * @return these options
     */
    public ReduceLrOptions monitor(String monitor) {
      this.monitor = monitor;
      set |= CairnNative.REDUCE_LR_OPTIONS_MONITOR;
      return this;
    }

    /**
     * The factor applied to the rate, in [0, 1) (default 0.1).
     *
     * @param factor the factor
     * @return these options
     */
    public ReduceLrOptions factor(double factor) {
      this.factor = factor;
      set |= CairnNative.REDUCE_LR_OPTIONS_FACTOR;
      return this;
    }

    /**
     * Epochs without improvement before a reduction (default 10).
     *
     * @param patience the epochs
     * @return these options
     */
    public ReduceLrOptions patience(long patience) {
      this.patience = patience;
      set |= CairnNative.REDUCE_LR_OPTIONS_PATIENCE;
      return this;
    }

    /**
     * Which way the value improves (default AUTO).
     *
     * @param mode the mode
     * @return these options
     */
    public ReduceLrOptions mode(MonitorMode mode) {
      this.mode = Objects.requireNonNull(mode, "mode");
      set |= CairnNative.REDUCE_LR_OPTIONS_MODE;
      return this;
    }

    /**
     * A smaller change is no improvement (default 0.0001).
     *
     * @param minDelta the smallest improvement
     * @return these options
     */
    public ReduceLrOptions minDelta(double minDelta) {
      this.minDelta = minDelta;
      set |= CairnNative.REDUCE_LR_OPTIONS_MIN_DELTA;
      return this;
    }

    /**
     * Epochs to wait after a reduction (default 0).
     *
     * @param cooldown the epochs
     * @return these options
     */
    public ReduceLrOptions cooldown(long cooldown) {
      this.cooldown = cooldown;
      set |= CairnNative.REDUCE_LR_OPTIONS_COOLDOWN;
      return this;
    }

    /**
     * The lowest rate (default 0).
     *
     * @param minLr the lowest rate
     * @return these options
     */
    public ReduceLrOptions minLr(double minLr) {
      this.minLr = minLr;
      set |= CairnNative.REDUCE_LR_OPTIONS_MIN_LR;
      return this;
    }
  }

  /** Options of {@link #csvLogger}; unset fields keep the C defaults. */
  final class CsvLoggerOptions {
    private long set;
    private final String path;
    private char separator;
    private boolean append;

    /**
     * Options writing {@code path}.
     *
     * @param path the file
     */
    public CsvLoggerOptions(String path) {
      this.path = path;
    }

    /**
     * The separator, an ASCII character (default ',').
     *
     * @param separator the separator
     * @return these options
     */
    public CsvLoggerOptions separator(char separator) {
      if (separator > 127) throw new IllegalArgumentException("CsvLoggerOptions.separator: not ASCII: " + separator);
      this.separator = separator;
      set |= 1;
      return this;
    }

    /**
     * Appends rows to the file (a header only to an empty one) instead of a new file (default false).
     *
     * @param append whether to append
     * @return these options
     */
    public CsvLoggerOptions append(boolean append) {
      this.append = append;
      set |= 2;
      return this;
    }
  }

  /** Options of {@link #backupAndRestore}; unset fields keep the C defaults. */
  final class BackupOptions {
    private long set = CairnNative.BACKUP_OPTIONS_DIRECTORY;
    private final String directory;
    private long saveFreq;
    private boolean deleteCheckpoint;

    /**
     * Options backing up into {@code directory}.
     *
     * @param directory the backup directory
     */
    public BackupOptions(String directory) {
      this.directory = directory;
    }

    /**
     * Backs up every {@code n} batches instead of at each epoch's end (default 0: epochs).
     *
     * @param n the batches between backups
     * @return these options
     */
    public BackupOptions saveFreq(long n) {
      saveFreq = n;
      set |= CairnNative.BACKUP_OPTIONS_SAVE_FREQ;
      return this;
    }

    /**
     * Whether the backup is removed when fit ends normally (default true).
     *
     * @param delete whether to delete it
     * @return these options
     */
    public BackupOptions deleteCheckpoint(boolean delete) {
      deleteCheckpoint = delete;
      set |= CairnNative.BACKUP_OPTIONS_DELETE_CHECKPOINT;
      return this;
    }
  }
}
