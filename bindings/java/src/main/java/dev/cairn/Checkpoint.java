package dev.cairn;

import java.lang.ref.Reference;
import java.util.Map;
import java.util.Objects;

/**
 * A checkpoint (tf.train.Checkpoint): a root trackable over named children, plus a
 * "save_counter" variable, saved to and restored from one file. Keys read like
 * tf.train.list_variables: "&lt;path&gt;/.ATTRIBUTES/VARIABLE_VALUE". {@link #restore} also
 * restores TensorFlow checkpoints by object graph, and {@link #export} writes one TensorFlow
 * restores (or a safetensors file of every value).
 *
 * <p>Use one checkpoint (and its {@link CheckpointManager}) from one thread at a time. Close it
 * when done (waiting for a background save; its error is logged); a daemon thread frees one
 * collected unclosed.
 */
public final class Checkpoint extends NativeHandle {
  private volatile Trackable root;

  private Checkpoint(long handle) {
    super(handle, CairnNative::checkpointFree);
  }

  /**
   * A checkpoint without children (add edges to {@link #root()}).
   *
   * @param ctx the context
   * @return a checkpoint without children (add edges to {@link #root()})
   */
  public static Checkpoint create(CairnContext ctx) {
    return create(ctx, Map.of());
  }

  /**
   * {@code Checkpoint(name=child)}.
   *
   * @param ctx the context
   * @param name the name
   * @param child the object to track
   * @return the new checkpoint, which the caller closes
   */
  public static Checkpoint create(CairnContext ctx, String name, CairnObject child) {
    return create(ctx, Map.of(name, child));
  }

  /**
   * {@code Checkpoint(**children)}: the root gets one edge per entry, set in name order whatever
   * the map's order. Names are unique, non-empty, without '/', and not "save_counter"
   * (INVALID_ARGUMENT otherwise). The root holds its own references to the children.
   *
   * @param ctx the context
   * @param children the named objects to track
   * @return the new checkpoint, which the caller closes
   */
  public static Checkpoint create(CairnContext ctx, Map<String, ? extends CairnObject> children) {
    Objects.requireNonNull(children, "children");
    int n = children.size();
    Object[] names = new Object[n];
    long[] handles = new long[n];
    CairnObject[] objects = new CairnObject[n];
    int i = 0;
    for (Map.Entry<String, ? extends CairnObject> e : children.entrySet()) {
      names[i] = NativeResources.cstr(Objects.requireNonNull(e.getKey(), "name"));
      objects[i] = Objects.requireNonNull(e.getValue(), e.getKey());
      handles[i] = objects[i].handle();
      ++i;
    }
    long c = ctx.handle();
    try {
      return new Checkpoint(CairnNative.checkpointCreate(c, names, handles));
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(objects);
    }
  }

  /**
   * The root object, borrowed from this checkpoint: its {@code close()} does nothing, and it is
   * unusable once the checkpoint is closed ({@link CairnObject#share()} gives a handle of one's
   * own). Add more edges with {@link CairnObject#set}.
   *
   * @return the root, borrowed from this checkpoint
   */
  public Trackable root() {
    Trackable r = root;
    if (r == null) {
      long h = handle();
      try {
        r = new Trackable(CairnNative.checkpointRoot(h), this);
      } finally {
        Reference.reachabilityFence(this);
      }
      root = r;
    }
    checkClosed();
    return r;
  }

  /**
   * Options for {@link #setOptions}; each starts at its default.
   *
   * @return new options, each at its default
   */
  public static Options options() {
    return new Options();
  }

  /** cairn_checkpoint_options. Not thread-safe to mutate. */
  public static final class Options {
    private long set; // CairnNative.CHECKPOINT_OPTIONS_* of the fields set
    private boolean compress;
    private boolean async;
    private boolean fsync;

    /** Options at their defaults (the same as {@code options()}). */
    public Options() {}

    /**
     * zstd per payload, stored raw when it would not shrink; default false.
     *
     * @param compress whether to compress the tensor data
     * @return these options
     */
    public Options compress(boolean compress) {
      this.compress = compress;
      set |= CairnNative.CHECKPOINT_OPTIONS_COMPRESS;
      return this;
    }

    /**
     * Save and write snapshot the values and write in the background; default false. An error
     * shows up on the next save, write, restore or {@link Checkpoint#sync()}.
     *
     * @param async whether to write in the background
     * @return these options
     */
    public Options async(boolean async) {
      this.async = async;
      set |= CairnNative.CHECKPOINT_OPTIONS_ASYNC;
      return this;
    }

    /**
     * fsync the file and its directory (crash safety); default true.
     *
     * @param fsync whether to fsync the written files
     * @return these options
     */
    public Options fsync(boolean fsync) {
      this.fsync = fsync;
      set |= CairnNative.CHECKPOINT_OPTIONS_FSYNC;
      return this;
    }
  }

  /**
   * Sets the options (null: the defaults). Returns this.
   *
   * @param options the options (null: every default)
   * @return this checkpoint
   */
  public Checkpoint setOptions(Options options) {
    if (options == null) options = new Options();
    long h = handle();
    try {
      CairnNative.checkpointSetOptions(h, options.set, options.compress ? 1 : 0, options.async ? 1 : 0, options.fsync ? 1 : 0);
    } finally {
      Reference.reachabilityFence(this);
    }
    return this;
  }

  /**
   * The current save_counter (0 before the first save or restore).
   *
   * @return the current save_counter (0 before the first save or restore)
   */
  public long saveCounter() {
    long h = handle();
    try {
      return CairnNative.checkpointSaveCounter(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Increments save_counter and writes "&lt;prefix&gt;-&lt;save_counter&gt;" atomically; returns that path.
   *
   * @param prefix the path prefix; the save counter is appended
   * @return the path written
   */
  public String save(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    byte[] p = NativeResources.cstr(prefix);
    long h = handle();
    try {
      return CairnNative.checkpointSave(h, p);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Writes the checkpoint to exactly {@code path} (atomically), leaving save_counter alone.
   *
   * @param path the file or checkpoint path
   */
  public void write(String path) {
    byte[] p = NativeResources.cstr(path);
    long h = handle();
    try {
      CairnNative.checkpointWrite(h, p);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Waits for a background (async) save and throws its error, if any. */
  public void sync() {
    long h = handle();
    try {
      CairnNative.checkpointSync(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Restores values from {@code path} (null: nothing, like TF's restore(None), whose asserts
   * then fail) by matching checkpoint objects to live ones along the same edges. Values whose
   * objects do not exist yet are applied when their edge is created: they wait on the live
   * objects that will receive them, so closing this checkpoint and the status loses nothing. Throws NOT_FOUND for a missing file, DATA_LOSS for a
   * damaged one, INVALID_ARGUMENT for a dtype or shape mismatch (naming the key).
   *
   * <p>{@code path} may also be a TensorFlow checkpoint (a prefix such as "dir/ckpt-5", its .index
   * file, or a directory whose {@code checkpoint} state file names one), e.g. what
   * tf.train.Checkpoint(model=keras_model, optimizer=adam).write wrote: its object graph is
   * matched with the same rules after Keras' edge names are mapped onto Cairn's layers and
   * optimizers (docs/tf_checkpoints.md), and each value's CRC32C is checked as it loads. A TF1
   * name-based checkpoint or a safetensors file has no object graph (INVALID_ARGUMENT): load those
   * by name with {@link CairnObject#loadWeights}. A failed restore leaves the values it already
   * assigned and keeps no deferred restores.
   *
   * @param path the file or checkpoint path
   * @return the restore status, which the caller closes
   */
  public RestoreStatus restore(String path) {
    byte[] p = NativeResources.cstr(path);
    long h = handle();
    try {
      return new RestoreStatus(CairnNative.checkpointRestore(h, p));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Options for {@link #export(String, WeightsFormat, ExportOptions)}; each starts at its default.
   *
   * @return new options, each at its default
   */
  public static ExportOptions exportOptions() {
    return new ExportOptions();
  }

  /** cairn_export_options: how {@link #export} lays a TensorFlow checkpoint out. Not thread-safe to mutate. */
  public static final class ExportOptions {
    private long set; // CairnNative.EXPORT_OPTIONS_* of the fields set
    private boolean kerasNames;
    private boolean saveCounter;

    /** Options at their defaults (the same as {@code exportOptions()}). */
    public ExportOptions() {}

    /**
     * TF: lay Cairn's layers and optimizers out as Keras 3 does, so that
     * tf.train.Checkpoint(model=&lt;the Keras model&gt;, ...) restores them; false keeps Cairn's edge
     * names (what a tf.Module restores). Default true.
     *
     * @param kerasNames whether to use Keras 3's layout
     * @return these options
     */
    public ExportOptions kerasNames(boolean kerasNames) {
      this.kerasNames = kerasNames;
      set |= CairnNative.EXPORT_OPTIONS_KERAS_NAMES;
      return this;
    }

    /**
     * TF: include save_counter (TensorFlow's restore expects it). Default true.
     *
     * @param saveCounter whether to write save_counter
     * @return these options
     */
    public ExportOptions saveCounter(boolean saveCounter) {
      this.saveCounter = saveCounter;
      set |= CairnNative.EXPORT_OPTIONS_SAVE_COUNTER;
      return this;
    }
  }

  /**
   * {@code export(path, format, null)}.
   *
   * @param path the file (for TF: the prefix of the bundle)
   * @param format TF, CAIRN or SAFETENSORS
   */
  public void export(String path, WeightsFormat format) {
    export(path, format, null);
  }

  /**
   * Writes the checkpoint to {@code path} in {@code format}, atomically (a failed export leaves an
   * earlier file at {@code path} as it was), leaving save_counter alone. TF writes the bundle
   * "&lt;path&gt;.index" + "&lt;path&gt;.data-00000-of-00001" with TensorFlow's object graph, which
   * tf.train.Checkpoint restores (and {@link #restore} too); CAIRN what {@link #write} writes;
   * SAFETENSORS every value by its checkpoint key, without an object graph (to save one module
   * under short names use {@link CairnObject#saveWeights}).
   *
   * @param path the file (for TF: the prefix of the bundle)
   * @param format TF, CAIRN or SAFETENSORS
   * @param options the options (null: every default)
   * @throws CairnException INVALID_ARGUMENT for AUTO; the errors of writing (PERMISSION_DENIED,
   *     RESOURCE_EXHAUSTED, ... naming the path)
   */
  public void export(String path, WeightsFormat format, ExportOptions options) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(format, "format");
    if (options == null) options = new ExportOptions();
    byte[] p = NativeResources.cstr(path);
    long h = handle();
    try {
      CairnNative.checkpointExport(h, p, format.value(), options.set, options.kerasNames ? 1 : 0, options.saveCounter ? 1 : 0);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "Checkpoint(closed)" : "Checkpoint(save_counter " + saveCounter() + ")";
  }
}
