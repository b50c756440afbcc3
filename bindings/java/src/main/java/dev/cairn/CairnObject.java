package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A tracked object of Cairn's object graph (TensorFlow's Trackable, tf.Module, tf.Variable,
 * ListWrapper, DictWrapper): objects joined by named, ordered edges, which checkpoints save.
 *
 * <p>Each instance owns one handle, that is one reference to its object: {@link #close()} drops
 * it, and the object goes when nothing else refers to it (edges hold their own references, so
 * handles and objects may be closed in any order). A daemon thread drops the reference of an
 * instance collected without {@code close()}. Several instances may refer to one object ({@link
 * #get} makes a new handle each time); {@link #sameObject} tells. Objects keep their context
 * alive, and may be used from several threads at once (closing one while another thread uses it
 * is a programming error).
 *
 * <p>The subclasses are the kinds: {@link Trackable}, {@link Module}, {@link Variable}, {@link
 * ListObject}, {@link DictObject}, {@link Optimizer}, {@link Layer} ({@link Sequential} is a
 * layer) and {@link DatasetIterator}. Methods handing out objects return the subclass of the object's kind (a plain {@code
 * CairnObject} for a kind this binding does not know): a {@link Layer} for any layer, a {@link
 * Trackable} for a {@link Metric} or a {@link LearningRateSchedule}, whose kind is TRACKABLE.
 *
 * <p>The one instance that owns nothing is {@link Checkpoint#root()}: a borrowed view whose
 * {@code close()} does nothing and which becomes unusable once its checkpoint is closed.
 */
public class CairnObject extends NativeHandle {
  private final Checkpoint lender; // the checkpoint a borrowed view comes from, else null

  /** Takes ownership of {@code handle}. */
  CairnObject(long handle) {
    super(handle, CairnNative::objectFree);
    this.lender = null;
  }

  /** A borrowed view of a handle {@code lender} owns. */
  CairnObject(long handle, Checkpoint lender) {
    super(handle, null);
    this.lender = Objects.requireNonNull(lender);
  }

  /** Wraps an owned handle in the class of its kind. */
  static CairnObject wrap(long handle) {
    ObjectKind kind = ObjectKind.fromValue(CairnNative.objectKindOf(handle));
    if (kind == null) return new CairnObject(handle);
    switch (kind) {
      case TRACKABLE: return new Trackable(handle);
      case MODULE: return new Module(handle);
      case VARIABLE: return new Variable(handle);
      case LIST: return new ListObject(handle);
      case DICT: return new DictObject(handle);
      case OPTIMIZER: return new Optimizer(handle);
      case LAYER: return new Layer(handle);
      case ITERATOR: return new DatasetIterator(handle);
      default: return new CairnObject(handle);
    }
  }

  /** Wraps an owned handle, which must be of class {@code type} (else it is freed and this throws). */
  static <T extends CairnObject> T wrap(long handle, Class<T> type, String what) {
    CairnObject obj = wrap(handle);
    if (type.isInstance(obj)) return type.cast(obj);
    String kind = obj.getClass().getSimpleName();
    obj.close();
    throw new ClassCastException(what + " is a " + kind + ", not a " + type.getSimpleName());
  }

  /**
   * Wraps the entries of a cairn_object_array (sharing each borrowed handle) and frees the
   * array, also on failure.
   */
  static List<ObjectPath> entries(long array) {
    List<ObjectPath> out = new ArrayList<>();
    try {
      long n = CairnNative.objectArraySize(array);
      for (long i = 0; i < n; ++i) {
        String path = CairnNative.objectArrayPath(array, i);
        long shared = CairnNative.objectShare(CairnNative.objectArrayGet(array, i));
        out.add(new ObjectPath(path, wrap(shared)));
      }
    } catch (RuntimeException | Error e) {
      for (ObjectPath p : out) p.close();
      throw e;
    } finally {
      CairnNative.objectArrayFree(array);
    }
    return Collections.unmodifiableList(out);
  }

  /** The objects of {@link #entries}, each checked to be a {@code type}. */
  static <T extends CairnObject> List<T> objects(long array, Class<T> type) {
    List<ObjectPath> entries = entries(array);
    List<T> out = new ArrayList<>(entries.size());
    for (ObjectPath e : entries) {
      if (!type.isInstance(e.object())) {
        for (ObjectPath p : entries) p.close();
        throw new IllegalStateException(e.path() + " is not a " + type.getSimpleName());
      }
      out.add(type.cast(e.object()));
    }
    return Collections.unmodifiableList(out);
  }

  // ---- edges ----

  /**
   * Creates or replaces the tracked edge {@code name} (an attribute of a trackable or module, a
   * key of a dict, or an existing index of a list) to {@code child}, which gets its own
   * reference. A checkpoint value waiting for this edge is restored into {@code child} before this
   * returns. Throws INVALID_ARGUMENT for a bad name or a variable parent.
   *
   * @param name the name
   * @param child the object to track
   */
  public void set(String name, CairnObject child) {
    Objects.requireNonNull(child, "child");
    byte[] n = NativeResources.cstr(name);
    long h = handle();
    long c = child.handle();
    try {
      CairnNative.objectSet(h, n, c);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(child);
    }
  }

  /**
   * Keeps {@code child} alive under {@code name} without tracking it: never walked, listed or
   * checkpointed. Only trackables and modules have untracked references.
   *
   * @param name the name
   * @param child the object to track
   */
  public void setUntracked(String name, CairnObject child) {
    Objects.requireNonNull(child, "child");
    byte[] n = NativeResources.cstr(name);
    long h = handle();
    long c = child.handle();
    try {
      CairnNative.objectSetUntracked(h, n, c);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(child);
    }
  }

  /**
   * The child at {@code name}, tracked or untracked (list elements are "0", "1", ...), as a new
   * handle the caller closes. Throws NOT_FOUND when there is no such child.
   *
   * @param name the name
   * @return the child, a new handle the caller closes
   */
  public CairnObject get(String name) {
    byte[] n = NativeResources.cstr(name);
    long h = handle();
    long child;
    try {
      child = CairnNative.objectGet(h, n);
    } finally {
      Reference.reachabilityFence(this);
    }
    return wrap(child);
  }

  /**
   * {@link #get(String)} as a {@code type}; throws ClassCastException for another kind.
   *
   * @param name the name
   * @param <T> the class of the object
   * @param type the class to return
   * @return the child, a new handle the caller closes
   */
  public <T extends CairnObject> T get(String name, Class<T> type) {
    Objects.requireNonNull(type, "type");
    CairnObject obj = get(name);
    if (type.isInstance(obj)) return type.cast(obj);
    String kind = obj.getClass().getSimpleName();
    obj.close();
    throw new ClassCastException("child \"" + name + "\" is a " + kind + ", not a " + type.getSimpleName());
  }

  /**
   * Deletes the edge {@code name} (tracked or untracked) from every later walk and checkpoint.
   * Throws NOT_FOUND (or OUT_OF_RANGE for a list) when there is no such edge.
   *
   * @param name the name
   */
  public void delete(String name) {
    byte[] n = NativeResources.cstr(name);
    long h = handle();
    try {
      CairnNative.objectDelete(h, n);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  // ---- facts ----

  /**
   * The object's kind; null for a kind this binding does not know.
   *
   * @return the object's kind; null for a kind this binding does not know
   */
  public ObjectKind kind() {
    long h = handle();
    try {
      return ObjectKind.fromValue(CairnNative.objectKindOf(h));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Whether both refer to the same object.
   *
   * @param other the other object
   * @return whether both refer to the same object
   */
  public boolean sameObject(CairnObject other) {
    if (other == null) return false;
    long a = handle();
    long b = other.handle();
    try {
      return CairnNative.objectSame(a, b) != 0;
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(other);
    }
  }

  /**
   * The number of tracked edges (0 for a variable).
   *
   * @return the number of tracked edges (0 for a variable)
   */
  public long childCount() {
    long h = handle();
    try {
      return CairnNative.objectChildCount(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * A new handle to the same object, owned by the caller (also for a borrowed view).
   *
   * @return a new handle to the same object, owned by the caller (also for a borrowed view)
   */
  public CairnObject share() {
    long h = handle();
    long shared;
    try {
      shared = CairnNative.objectShare(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return wrap(shared);
  }

  // ---- queries (tf.Module) ----

  /**
   * The tracked edges in order (index order for a list), each with its edge name as path.
   *
   * @return the tracked edges in order (index order for a list), each with its edge name as path
   */
  public List<ObjectPath> children() {
    long h = handle();
    long array;
    try {
      array = CairnNative.objectChildren(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return entries(array);
  }

  /**
   * tf.Module.variables (all) or .trainable_variables ({@code trainableOnly}): own variables sorted
   * by attribute name, then those of submodules, depth-first; each once. The caller closes them.
   *
   * @param trainableOnly whether to list trainable variables only
   * @return the variables, each a new handle the caller closes
   */
  public List<Variable> variables(boolean trainableOnly) {
    long h = handle();
    long array;
    try {
      array = CairnNative.objectVariables(h, trainableOnly ? 1 : 0);
    } finally {
      Reference.reachabilityFence(this);
    }
    return objects(array, Variable.class);
  }

  /**
   * {@code variables(false)}.
   *
   * @return every variable, each a new handle the caller closes
   */
  public List<Variable> variables() {
    return variables(false);
  }

  /**
   * {@code variables(true)}.
   *
   * @return the trainable variables, each a new handle the caller closes
   */
  public List<Variable> trainableVariables() {
    return variables(true);
  }

  /**
   * tf.Module.submodules: every module reachable from this one (itself excluded), each once.
   *
   * @return the modules, each a new handle the caller closes
   */
  public List<Module> submodules() {
    long h = handle();
    long array;
    try {
      array = CairnNative.objectSubmodules(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return objects(array, Module.class);
  }

  /**
   * tf.Module._flatten(with_path=True): every (path, object) pair reachable from this one.
   *
   * @return the objects with their paths, each a new handle the caller closes
   */
  public List<ObjectPath> flatten() {
    long h = handle();
    long array;
    try {
      array = CairnNative.objectFlatten(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return entries(array);
  }

  /**
   * Every object reachable along tracked edges in checkpoint order: this one first (path ""),
   * then breadth-first; each once, with the first path reaching it.
   *
   * @return the objects with their paths, each a new handle the caller closes
   */
  public List<ObjectPath> walk() {
    long h = handle();
    long array;
    try {
      array = CairnNative.objectWalk(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return entries(array);
  }

  // ---- weights by name (Keras' load_weights / save_weights) ----

  /**
   * {@code loadWeights(path, null)}: every variable under this object must be in the file, and
   * every value in it must go to a variable.
   *
   * @param path a Cairn checkpoint, a TensorFlow checkpoint or a safetensors file (see {@link
   *     #loadWeights(String, WeightsOptions)})
   * @return the number of variables assigned
   */
  public long loadWeights(String path) {
    return loadWeights(path, null);
  }

  /**
   * Loads the variables under this object (a module, layer, model or any object) by name from
   * {@code path}, in any of the three formats: a Cairn checkpoint file; a TensorFlow checkpoint (a
   * prefix such as "dir/ckpt-5", its .index file, or a directory whose {@code checkpoint} file
   * names one; TF1 name-based checkpoints too); safetensors (a .safetensors file, a sharded
   * model's index .json, or a directory holding one). Names are built as {@link WeightsOptions}
   * says. Every value is read and checked (dtype, shape, checksum) before any variable changes, so
   * a failed load leaves every variable as it was. Values are copied to each variable's device.
   *
   * @param path the file, prefix or directory
   * @param options the options (null: every default)
   * @return the number of variables assigned
   * @throws CairnException NOT_FOUND for a missing file or (without allowMissing) the variables
   *     the file lacks; INVALID_ARGUMENT naming the variable and key for a dtype or shape mismatch,
   *     and (without allowUnused) the values no variable took; DATA_LOSS for a damaged file
   */
  public long loadWeights(String path, WeightsOptions options) {
    Objects.requireNonNull(path, "path");
    if (options == null) options = new WeightsOptions();
    byte[] p = NativeResources.cstr(path);
    long h = handle();
    try {
      return CairnNative.objectLoadWeights(h, p, options.set(), options.prefixBytes(), options.separatorBytes(),
          options.allowMissing() ? 1 : 0, options.allowUnused() ? 1 : 0, options.checksums() ? 1 : 0,
          options.maxShardBytes(), options.metadataJsonBytes());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * {@code saveWeights(path, format, null)}.
   *
   * @param path the file (for TF: the prefix of the bundle)
   * @param format SAFETENSORS, TF or CAIRN
   */
  public void saveWeights(String path, WeightsFormat format) {
    saveWeights(path, format, null);
  }

  /**
   * Saves the variables under this object by name to {@code path} in {@code format} (Keras'
   * save_weights), atomically: a failed save leaves an earlier file at {@code path} as it was.
   * SAFETENSORS writes a file the safetensors package reads (or shards, see {@link
   * WeightsOptions#maxShardBytes}); TF writes the name-based bundle "&lt;path&gt;.index" +
   * "&lt;path&gt;.data-00000-of-00001" (tf.train.load_checkpoint and TF1's Saver read it); CAIRN a
   * Cairn file of the names without an object graph. {@link #loadWeights} reads each back. For a
   * checkpoint TensorFlow restores by object graph use {@link Checkpoint#export}.
   *
   * @param path the file (for TF: the prefix of the bundle; for shards: a directory)
   * @param format SAFETENSORS, TF or CAIRN
   * @param options the options (null: every default)
   * @throws CairnException INVALID_ARGUMENT for AUTO, an object without variables, two variables
   *     whose names collide; the errors of writing (PERMISSION_DENIED, ... naming the path)
   */
  public void saveWeights(String path, WeightsFormat format, WeightsOptions options) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(format, "format");
    if (options == null) options = new WeightsOptions();
    byte[] p = NativeResources.cstr(path);
    long h = handle();
    try {
      CairnNative.objectSaveWeights(h, p, format.value(), options.set(), options.prefixBytes(),
          options.separatorBytes(), options.allowMissing() ? 1 : 0, options.allowUnused() ? 1 : 0,
          options.checksums() ? 1 : 0, options.maxShardBytes(), options.metadataJsonBytes());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  // ---- lifetime ----

  /** Throws FAILED_PRECONDITION when this handle (or the checkpoint lending it) was closed. */
  @Override
  void checkClosed() {
    super.checkClosed();
    if (lender != null && lender.isClosed()) {
      throw closedError(Checkpoint.class, " (this object is its root)");
    }
  }

  /** Whether {@link #close()} was called (for a borrowed root: whether its checkpoint was closed). */
  @Override
  public boolean isClosed() {
    return super.isClosed() || lender != null && lender.isClosed();
  }

  /**
   * Whether this is a borrowed view ({@link Checkpoint#root()}) that owns no reference.
   *
   * @return whether this is a borrowed view ({@link Checkpoint#root()}) that owns no reference
   */
  public boolean isBorrowed() {
    return lender != null;
  }

  /** Drops this handle's reference. Idempotent; does nothing for a borrowed view. */
  @Override
  public void close() {
    if (lender != null) return;
    super.close();
  }

  /** The details toString shows after the class name; empty for none. */
  String describe() {
    return "";
  }

  @Override
  public String toString() {
    if (isClosed()) return getClass().getSimpleName() + "(closed)";
    String details = describe();
    return getClass().getSimpleName() + (details.isEmpty() ? "" : "(" + details + ")");
  }
}
